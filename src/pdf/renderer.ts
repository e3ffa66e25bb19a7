import type { Worker } from 'node:worker_threads';
import { startWorker } from '../threads.js';
import type { InvoicePdfInput } from './invoice-pdf.js';
import type { RenderAnswer, RenderRequest } from './render-worker.js';

/**
 * Invoice PDFs are drawn on a worker thread, one at a time, never on the thread that answers
 * requests: the largest invoice the spec allows takes seconds to lay out, and every other
 * client would wait that long. A render that runs past RENDER_TIME_LIMIT_MS has its thread
 * stopped and fails; the next render starts a new thread. The thread is started on first use
 * and does not keep a process alive while it has nothing to do.
 */

/** Longest one render may take before its thread is stopped and the render fails. */
export const RENDER_TIME_LIMIT_MS = 20_000;
/** Renders waiting their turn at most: past it a render fails at once instead of queueing. */
export const MAX_WAITING_RENDERS = 64;

export class PdfRenderFailed extends Error {
  override name = 'PdfRenderFailed';
}

interface Job {
  /** Sent with the request and answered back, so an answer is only ever taken for its own job. */
  id: number;
  request: RenderRequest;
  resolve: (pdf: Buffer) => void;
  reject: (error: Error) => void;
}

/** The PDF thread and the renders waiting for it. The server uses one (renderOffThread); tests make their own to see its limits act. */
export class RenderThread {
  readonly #timeLimitMs: number;
  readonly #hold = new Int32Array(new SharedArrayBuffer(4));
  readonly #waiting: Job[] = [];
  #nextId = 1;
  #worker: Worker | null = null;
  #current: { job: Job; timer: NodeJS.Timeout } | null = null;

  constructor(options: { timeLimitMs?: number } = {}) {
    this.#timeLimitMs = options.timeLimitMs ?? RENDER_TIME_LIMIT_MS;
  }

  render(request: RenderRequest): Promise<Buffer> {
    if (this.#waiting.length >= MAX_WAITING_RENDERS) {
      return Promise.reject(new PdfRenderFailed(`${MAX_WAITING_RENDERS} invoice PDFs are already waiting to be drawn`));
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ id: this.#nextId++, request, resolve, reject });
      this.#startNext();
    });
  }

  /** Ends the thread; renders still waiting fail. */
  async close(): Promise<void> {
    for (const job of this.#waiting.splice(0)) job.reject(new PdfRenderFailed('the PDF thread was closed'));
    const worker = this.#worker;
    if (worker) this.#stop(worker, new PdfRenderFailed('the PDF thread was closed'));
    await worker?.terminate();
  }

  /** Holds every render until the returned function is called (see holdPdfRenders). */
  hold(): () => void {
    Atomics.store(this.#hold, 0, 1);
    return () => {
      Atomics.store(this.#hold, 0, 0);
      Atomics.notify(this.#hold, 0);
    };
  }

  #startNext(): void {
    if (this.#current) return;
    const job = this.#waiting.shift();
    if (!job) {
      this.#worker?.unref();
      return;
    }
    let worker: Worker;
    try {
      worker = this.#started();
    } catch (error) {
      job.reject(new PdfRenderFailed(`the PDF thread could not start: ${(error as Error).message}`));
      this.#startNext();
      return;
    }
    worker.ref();
    const timer = setTimeout(() => this.#stop(worker, new PdfRenderFailed(`drawing the PDF took over ${this.#timeLimitMs} ms`)), this.#timeLimitMs);
    this.#current = { job, timer };
    worker.postMessage({ ...job.request, id: job.id } satisfies RenderRequest);
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startWorker(import.meta.url, 'render-worker', { workerData: { hold: this.#hold.buffer } });
    // A thread that was stopped may still deliver what it had queued: only the current
    // thread's events count, and an answer only for the job it names.
    worker.on('message', (answer: RenderAnswer) => {
      if (worker === this.#worker) this.#settle(answer);
    });
    worker.on('error', (error) => this.#stop(worker, error));
    worker.on('exit', (code) => this.#stop(worker, new PdfRenderFailed(`the PDF thread ended (exit ${code})`)));
    this.#worker = worker;
    return worker;
  }

  #settle(answer: RenderAnswer): void {
    if (this.#current?.job.id !== answer.id) return;
    const current = this.#take()!;
    if ('pdf' in answer) current.resolve(Buffer.from(answer.pdf.buffer, answer.pdf.byteOffset, answer.pdf.byteLength));
    // The drawing itself failed: a fault to log, not a busy thread to wait out.
    else current.reject(new Error(`drawing the PDF failed: ${answer.error}`));
    this.#startNext();
  }

  /** Ends `worker` (a render over its time, or a thread that failed) and fails its render; events of a thread already ended are ignored. */
  #stop(worker: Worker, error: Error): void {
    if (worker !== this.#worker) return;
    this.#worker = null;
    void worker.terminate();
    this.#take()?.reject(error);
    this.#startNext();
  }

  #take(): Job | null {
    const current = this.#current;
    if (!current) return null;
    clearTimeout(current.timer);
    this.#current = null;
    return current.job;
  }
}

const thread = new RenderThread();

/** The invoice's PDF (or, for a void invoice, its one-page notice), drawn off the request thread. */
export function renderOffThread(kind: RenderRequest['kind'], input: InvoicePdfInput): Promise<Buffer> {
  return thread.render({ kind, input });
}

/**
 * For tests: every render waits, on its thread, until the returned function is called. A test
 * holds a render this way and shows that the server answers other requests meanwhile, without
 * timing anything.
 */
export function holdPdfRenders(): () => void {
  return thread.hold();
}

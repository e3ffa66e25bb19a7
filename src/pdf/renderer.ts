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
  request: RenderRequest;
  resolve: (pdf: Buffer) => void;
  reject: (error: Error) => void;
}

class RenderThread {
  readonly #hold = new Int32Array(new SharedArrayBuffer(4));
  readonly #waiting: Job[] = [];
  #worker: Worker | null = null;
  #current: { job: Job; timer: NodeJS.Timeout } | null = null;

  render(request: RenderRequest): Promise<Buffer> {
    if (this.#waiting.length >= MAX_WAITING_RENDERS) {
      return Promise.reject(new PdfRenderFailed(`${MAX_WAITING_RENDERS} invoice PDFs are already waiting to be drawn`));
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ request, resolve, reject });
      this.#startNext();
    });
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
    const worker = this.#started();
    worker.ref();
    const timer = setTimeout(() => this.#stop(new PdfRenderFailed(`drawing the PDF took over ${RENDER_TIME_LIMIT_MS} ms`)), RENDER_TIME_LIMIT_MS);
    this.#current = { job, timer };
    worker.postMessage(job.request);
  }

  #started(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startWorker(import.meta.url, 'render-worker', { workerData: { hold: this.#hold.buffer } });
    worker.on('message', (answer: RenderAnswer) => this.#settle(answer));
    worker.on('error', (error) => this.#stop(error));
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#stop(new PdfRenderFailed(`the PDF thread ended (exit ${code})`));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(answer: RenderAnswer): void {
    const current = this.#take();
    if (!current) return;
    if ('pdf' in answer) current.resolve(Buffer.from(answer.pdf.buffer, answer.pdf.byteOffset, answer.pdf.byteLength));
    else current.reject(new PdfRenderFailed(answer.error));
    this.#startNext();
  }

  /** Ends the thread (a render over its time, or a thread that failed) and fails its render. */
  #stop(error: Error): void {
    const worker = this.#worker;
    this.#worker = null;
    if (worker) void worker.terminate();
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

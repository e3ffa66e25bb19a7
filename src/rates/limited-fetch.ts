import type { FxProvider } from '../config.js';
import { RateProviderError } from './provider-error.js';

/** Both answers are a few hundred bytes to a couple of kilobytes; anything near this is not one. */
const MAX_BODY_BYTES = 256 * 1024;

/**
 * GET `url` and its body as UTF-8 text, all within `timeoutMs` and MAX_BODY_BYTES. Every
 * failure is a RateProviderError of `kind`: unreachable, timeout, http_status, too_large or
 * malformed (not UTF-8).
 */
export async function fetchText(kind: FxProvider, url: string, accept: string, timeoutMs: number, fetchFn: typeof fetch): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const timedOut = () => new RateProviderError(kind, 'timeout', `no complete answer within ${timeoutMs} ms`);
  try {
    let response: Response;
    try {
      response = await fetchFn(url, { signal: controller.signal, headers: { accept } });
    } catch (error) {
      if (controller.signal.aborted) throw timedOut();
      throw new RateProviderError(kind, 'unreachable', `request failed (${describeFetchError(error)})`);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new RateProviderError(kind, 'http_status', `answered HTTP ${response.status}`);
    }
    try {
      return await readBody(kind, response);
    } catch (error) {
      if (controller.signal.aborted) throw timedOut();
      if (error instanceof RateProviderError) throw error;
      throw new RateProviderError(kind, 'unreachable', `reading the answer failed (${describeFetchError(error)})`);
    }
  } finally {
    clearTimeout(timer);
  }
}

async function readBody(kind: FxProvider, response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw new RateProviderError(kind, 'too_large', `answer is larger than ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RateProviderError(kind, 'malformed', 'answer is not UTF-8 text');
  }
}

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  // fetch's own refusals (a port it will not connect to, such as 9 or 25) have a message but no code.
  if (cause && typeof cause.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

import { Agent } from 'node:http';
import { type RequestOptions, sendRequest, type TestResponse } from './app.js';

/** One request of a burst: its method, path and options, as sendRequest takes them. */
export interface BurstRequest {
  method: string;
  path: string;
  options?: RequestOptions;
}

/**
 * Sends `requests` at once, as concurrent clients do: first it opens one kept-alive connection
 * per request (each answers GET /healthz), then it writes every request in the same turn of the
 * event loop, so the server reads them together and the write door can commit them together.
 */
export async function sendBurst(baseUrl: string, requests: readonly BurstRequest[]): Promise<TestResponse[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: requests.length });
  try {
    await Promise.all(requests.map(() => sendRequest(baseUrl, 'GET', '/healthz', { agent })));
    return await Promise.all(requests.map(({ method, path, options }) => sendRequest(baseUrl, method, path, { ...options, agent })));
  } finally {
    agent.destroy();
  }
}

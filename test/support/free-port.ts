import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on now. For a server whose own address must be known before
 * it starts (its site address, where a processor or a link sends the browser back).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

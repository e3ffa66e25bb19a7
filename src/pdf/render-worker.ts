import { parentPort, workerData } from 'node:worker_threads';
import { type InvoicePdfInput, renderInvoicePdf, renderVoidInvoicePdf } from './invoice-pdf.js';

/** The PDF thread (src/pdf/renderer.ts): draws one invoice per message and answers its bytes or its error. */

export interface RenderRequest {
  /** Set by the renderer for each render and answered back. */
  id?: number;
  /** `void`: the one-page notice that the invoice was voided, instead of the invoice. */
  kind: 'invoice' | 'void';
  input: InvoicePdfInput;
}

export type RenderAnswer = { id: number; pdf: Uint8Array } | { id: number; error: string };

const port = parentPort;
if (port) {
  const hold = new Int32Array((workerData as { hold: SharedArrayBuffer }).hold);
  port.on('message', (request: RenderRequest) => {
    // Waits while a test holds renders (holdPdfRenders); free otherwise.
    Atomics.wait(hold, 0, 1);
    const render = request.kind === 'void' ? renderVoidInvoicePdf : renderInvoicePdf;
    const id = request.id ?? 0;
    render(request.input).then(
      (pdf) => port.postMessage({ id, pdf } satisfies RenderAnswer),
      (error: unknown) => port.postMessage({ id, error: error instanceof Error ? error.message : String(error) } satisfies RenderAnswer),
    );
  });
}

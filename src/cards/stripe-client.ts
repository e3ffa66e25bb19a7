import type Stripe from 'stripe';

/**
 * The processor's official SDK, pointed at DAYBOOK_STRIPE_API_URL (an origin: the SDK takes a
 * host, port and scheme) and holding one business's secret key. Built per call: each business
 * has its own key, and building one is cheap. The SDK is loaded on the first call (36 MB of a
 * server that takes no card payments would otherwise hold it from the start).
 */
export async function stripeClient(apiUrl: string, secretKey: string): Promise<Stripe> {
  const { default: StripeSdk } = await import('stripe');
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return new StripeSdk(secretKey, {
    host: url.hostname,
    port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port),
    protocol,
    // A customer waits on the answer: fail in seconds, not the SDK's 80, and try once more.
    timeout: 10_000,
    maxNetworkRetries: 1,
    telemetry: false,
  });
}

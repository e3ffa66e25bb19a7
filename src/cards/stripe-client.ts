import Stripe from 'stripe';

/**
 * The processor's official SDK, pointed at DAYBOOK_STRIPE_API_URL (an origin: the SDK takes a
 * host, port and scheme) and holding one business's secret key. Built per call: each business
 * has its own key, and building one is cheap.
 */
export function stripeClient(apiUrl: string, secretKey: string): Stripe {
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(secretKey, {
    host: url.hostname,
    port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port),
    protocol,
    // A customer waits on the answer: fail in seconds, not the SDK's 80, and try once more.
    timeout: 10_000,
    maxNetworkRetries: 1,
    telemetry: false,
  });
}

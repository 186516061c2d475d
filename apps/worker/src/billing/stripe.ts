import Stripe from "stripe";
import type { Config } from "../env.ts";

/**
 * The real Stripe client over fetch. With `STRIPE_API_URL` set (dev and tests) it talks to the
 * local Stripe stand-in instead of api.stripe.com; nothing else changes.
 */
export function stripeClient(config: Config): Stripe {
  const target = config.stripe.apiUrl ? new URL(config.stripe.apiUrl) : null;
  return new Stripe(config.stripe.secretKey, {
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: 2,
    ...(target && {
      host: target.hostname,
      port: Number(target.port || (target.protocol === "https:" ? 443 : 80)),
      protocol: target.protocol === "https:" ? "https" : "http",
    }),
  });
}

export const webCrypto = Stripe.createSubtleCryptoProvider();

/**
 * Whether Stripe refused a request because its idempotency key was first used with other
 * parameters (or on another endpoint): the caller reused a key, nothing was created.
 */
export const isIdempotencyConflict = (error: unknown): boolean =>
  error instanceof Stripe.errors.StripeIdempotencyError;

import { z } from "zod";

/**
 * Configuration read from the Worker's bindings, validated once per `env` object. A missing or
 * malformed secret fails loudly at the first request instead of minting unusable tokens.
 */
const configSchema = z.object({
  JWT_PRIVATE_KEY: z.string().min(1, "JWT_PRIVATE_KEY is not set (run `pnpm dev` once locally)"),
  JWT_ISSUER: z.string().min(1),
  JWT_AUDIENCE: z.string().min(1),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(3600),
  REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(3600),
  SIGNUP_GRANT_MICROS: z.coerce.number().int().min(0),
  CHECKOUT_MIN_MICROS: z.coerce.number().int().min(500_000),
  CHECKOUT_MAX_MICROS: z.coerce.number().int().min(500_000),
  STRIPE_SECRET_KEY: z.string().min(1, "STRIPE_SECRET_KEY is not set"),
  STRIPE_WEBHOOK_SECRET: z.string().min(1, "STRIPE_WEBHOOK_SECRET is not set"),
  STRIPE_API_URL: z.union([z.literal(""), z.url()]).default(""),
  PUBLIC_URL: z.union([z.literal(""), z.url()]).default(""),
});

export type Config = {
  jwtPrivateKey: string;
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  signupGrantMicros: number;
  checkoutMinMicros: number;
  checkoutMaxMicros: number;
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string | null };
  publicUrl: string | null;
};

const cache = new WeakMap<object, Config>();

export function config(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const parsed = configSchema.parse(env);
  const value: Config = {
    jwtPrivateKey: parsed.JWT_PRIVATE_KEY,
    issuer: parsed.JWT_ISSUER,
    audience: parsed.JWT_AUDIENCE,
    accessTokenTtlSeconds: parsed.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: parsed.REFRESH_TOKEN_TTL_SECONDS,
    signupGrantMicros: parsed.SIGNUP_GRANT_MICROS,
    checkoutMinMicros: parsed.CHECKOUT_MIN_MICROS,
    checkoutMaxMicros: parsed.CHECKOUT_MAX_MICROS,
    stripe: {
      secretKey: parsed.STRIPE_SECRET_KEY,
      webhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
      apiUrl: parsed.STRIPE_API_URL || null,
    },
    publicUrl: parsed.PUBLIC_URL || null,
  };
  cache.set(env, value);
  return value;
}

declare global {
  interface Env {
    /** OpenRouter's key (a secret). Absent offline: the dev model needs none. */
    OPENROUTER_API_KEY?: string;
  }
}

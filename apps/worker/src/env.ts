import { DEFAULT_LEASE_POLICY, type LeasePolicy, type StepPrices } from "@parley/billing";
import { z } from "zod";
import { priceTable } from "./billing/prices.ts";

/**
 * Every secret the Worker reads: wrangler.jsonc `secrets.required` lists the same names (so
 * `wrangler deploy` refuses to deploy while one is unset, and wrangler dev loads them from
 * .dev.vars), `pnpm dev` makes each (scripts/lib/dev-secrets.mjs), and the Worker refuses every
 * request naming the missing ones (`config`). test/node/secrets.test.ts keeps the lists equal.
 */
export const REQUIRED_SECRETS = [
  "JWT_PRIVATE_KEY",
  "STRIPE_SECRET_KEY",
  "STRIPE_WEBHOOK_SECRET",
  "ALERT_WEBHOOK_SECRET",
  "ERASURE_HASH_KEY",
  "APP_SECRETS_KEY",
  "OPERATOR_SECRET",
  "OPENROUTER_API_KEY",
] as const;

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Whether `url` names this machine (a loopback host); false for anything unparsable. */
export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * The required secrets `env` lacks: unset or empty. `OPENROUTER_API_KEY` may be empty only while
 * the model is on this machine (`MODEL_BASE_URL` on a loopback host: the dev model needs no key).
 */
export function missingSecrets(env: Env): string[] {
  const vars = env as unknown as Record<string, unknown>;
  // No model URL, or one elsewhere: a key is needed.
  const modelHere = isLoopbackUrl(String(vars.MODEL_BASE_URL ?? ""));
  return REQUIRED_SECRETS.filter((name) => {
    const value = vars[name];
    if (typeof value !== "string") return true;
    return value === "" && !(name === "OPENROUTER_API_KEY" && modelHere);
  });
}

/** A `YYYY-MM-DD` var, the last UTC day something lasts: unset or "" takes `fallback`. */
const lastDay = (fallback: string) =>
  z
    .union([z.literal(""), z.iso.date()])
    .optional()
    .transform((value) => Date.parse(`${value || fallback}T00:00:00Z`) + 86_400_000);

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
  /** Days until the sign-up grant expires; unset or "": it never does. */
  SIGNUP_GRANT_DAYS: z
    .union([z.literal(""), z.coerce.number().int().min(1).max(3650)])
    .optional()
    .transform((value) => (value === "" || value === undefined ? null : value)),
  /**
   * The platform operator's secret (routes/operator.ts), required like every secret (a deploy
   * without it used to answer the operator 401 and warn nobody). At least 32 characters: it hands
   * out free credits.
   */
  OPERATOR_SECRET: z.string().min(32, "OPERATOR_SECRET must be at least 32 characters"),
  /**
   * The last UTC day the deprecated forms with an invitation's secret in the path answer
   * (`GET /api/auth/invitations/:token`, `POST /api/invitations/:token/accept`); 410 from the
   * next day. Deprecated 2026-12-04; default 14 days later (docs/2026-12-04-invitation-secrets.md).
   */
  INVITATION_PATH_FORMS_END: lastDay("2026-12-18"),
  /**
   * The same for `DELETE /api/apps/:appId/end-users/:externalId` (the tenant's id in the path),
   * deprecated 2026-12-06; default a month later, a tenant's server needs a deploy to move
   * (docs/2026-12-06-end-user-ids.md).
   */
  END_USER_ERASE_PATH_END: lastDay("2027-01-05"),
});

export type Config = {
  jwtPrivateKey: string;
  issuer: string;
  audience: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  signupGrantMicros: number;
  signupGrantDays: number | null;
  operatorSecret: string;
  checkoutMinMicros: number;
  checkoutMaxMicros: number;
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string | null };
  publicUrl: string | null;
  /** When deprecated path forms stop answering (ms, the first instant they answer 410). */
  pathFormsEnd: { invitationSecret: number; endUserErase: number };
};

const cache = new WeakMap<object, Config>();

/**
 * The Worker's configuration. A deployment missing a secret fails loudly here, at its first
 * request, naming what is missing (never a value), rather than answering some routes 401 or 500
 * later; `app.ts` asks for it before any route.
 */
export function config(env: Env): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const missing = missingSecrets(env);
  if (missing.length > 0) {
    throw new Error(
      `Missing required secrets: ${missing.join(", ")}. Set each with \`wrangler secret put <NAME>\` (locally, \`pnpm dev\` writes them to .dev.vars).`,
    );
  }
  const parsed = configSchema.parse(env);
  const value: Config = {
    jwtPrivateKey: parsed.JWT_PRIVATE_KEY,
    issuer: parsed.JWT_ISSUER,
    audience: parsed.JWT_AUDIENCE,
    accessTokenTtlSeconds: parsed.ACCESS_TOKEN_TTL_SECONDS,
    refreshTokenTtlSeconds: parsed.REFRESH_TOKEN_TTL_SECONDS,
    signupGrantMicros: parsed.SIGNUP_GRANT_MICROS,
    signupGrantDays: parsed.SIGNUP_GRANT_DAYS,
    operatorSecret: parsed.OPERATOR_SECRET,
    checkoutMinMicros: parsed.CHECKOUT_MIN_MICROS,
    checkoutMaxMicros: parsed.CHECKOUT_MAX_MICROS,
    stripe: {
      secretKey: parsed.STRIPE_SECRET_KEY,
      webhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
      apiUrl: parsed.STRIPE_API_URL || null,
    },
    publicUrl: parsed.PUBLIC_URL || null,
    pathFormsEnd: {
      invitationSecret: parsed.INVITATION_PATH_FORMS_END,
      endUserErase: parsed.END_USER_ERASE_PATH_END,
    },
  };
  cache.set(env, value);
  return value;
}

/**
 * A whole-number setting from a var: unset or "" takes the default; anything else must be an
 * integer of at least `min` (a malformed value fails loudly at the first use, like `config`).
 */
const whole = (fallback: number, min: number) =>
  z.preprocess(
    (value) => (value === undefined || value === "" ? fallback : value),
    z.coerce.number().int().min(min),
  );

const agentSchema = z.object({
  MODEL_ID: z.string().min(1),
  MODEL_CATALOGUE: z.string().optional(),
  CATALOGUE_DEV_MODELS: z.string().optional(),
  MARKUP_BPS: whole(0, 0),
  ASSISTANT_MAX_OUTPUT_TOKENS: whole(1024, 1),
  ASSISTANT_MAX_STEPS: whole(6, 1),
  ASSISTANT_CONTEXT_TOKENS: whole(12_000, 1),
  PREVIEW_TURNS: whole(20, 0),
  PREVIEW_ORG_DAILY_CAP: whole(200, 0),
  PREVIEW_CONTEXT_TOKENS: whole(4_000, 1),
  PREVIEW_MAX_OUTPUT_TOKENS: whole(512, 1),
  MAX_USER_MESSAGE_BYTES: whole(16 * 1024, 1),
  MODEL_STALL_TIMEOUT_MS: whole(30_000, 1),
  STREAM_COALESCE_MS: whole(40, 0),
  LEASE_STEPS: whole(DEFAULT_LEASE_POLICY.steps, 0),
  LEASE_TTL_MS: whole(DEFAULT_LEASE_POLICY.ttlMs, 60_000),
  LEASE_FLUSH_MS: whole(300_000, 0),
  LEASE_IDLE_MS: whole(60_000, 0),
  AUTHZ_CACHE_MS: whole(60_000, 0),
});

/** What the chat agents read from their vars, parsed once per `env` object (one per object). */
export interface AgentSettings {
  /**
   * The platform default model, the configured catalogue's price table (billing/prices.ts) and the
   * markup. A turn's own model and prices come from the resolver (assistants/resolve.ts).
   */
  prices: StepPrices;
  assistant: { maxOutputTokens: number; maxSteps: number; contextTokens: number };
  preview: { turns: number; orgDailyCap: number; contextTokens: number; maxOutputTokens: number };
  maxUserMessageBytes: number;
  modelStallTimeoutMs: number;
  streamCoalesceMs: number;
  /**
   * Session credit leases (docs/2026-12-01-metering-leases.md): how many expected calls a grant
   * covers (`policy.steps`, 0 turns leases off: a hold per call), how long a settled call's usage
   * may wait at most for a report (`flushMs`), and after how long without a turn the lease is
   * returned.
   */
  lease: { policy: LeasePolicy; flushMs: number; idleMs: number };
  /** How long an agent trusts the access it read from D1 without a push (the bound of a lost push). */
  authzCacheMs: number;
}

const agentCache = new WeakMap<object, AgentSettings>();

export function agentSettings(env: Env): AgentSettings {
  const cached = agentCache.get(env);
  if (cached) return cached;
  const parsed = agentSchema.parse(env);
  const value: AgentSettings = {
    prices: {
      table: priceTable(parsed),
      model: parsed.MODEL_ID,
      markupBps: parsed.MARKUP_BPS,
    },
    assistant: {
      maxOutputTokens: parsed.ASSISTANT_MAX_OUTPUT_TOKENS,
      maxSteps: parsed.ASSISTANT_MAX_STEPS,
      contextTokens: parsed.ASSISTANT_CONTEXT_TOKENS,
    },
    preview: {
      turns: parsed.PREVIEW_TURNS,
      orgDailyCap: parsed.PREVIEW_ORG_DAILY_CAP,
      contextTokens: parsed.PREVIEW_CONTEXT_TOKENS,
      maxOutputTokens: parsed.PREVIEW_MAX_OUTPUT_TOKENS,
    },
    maxUserMessageBytes: parsed.MAX_USER_MESSAGE_BYTES,
    modelStallTimeoutMs: parsed.MODEL_STALL_TIMEOUT_MS,
    streamCoalesceMs: parsed.STREAM_COALESCE_MS,
    lease: {
      policy: {
        steps: parsed.LEASE_STEPS,
        ttlMs: parsed.LEASE_TTL_MS,
        // A call drawn on a lease ends before the lease could expire: at most half its life.
        callMs: Math.min(DEFAULT_LEASE_POLICY.callMs, Math.floor(parsed.LEASE_TTL_MS / 2)),
      },
      flushMs: parsed.LEASE_FLUSH_MS,
      idleMs: parsed.LEASE_IDLE_MS,
    },
    authzCacheMs: parsed.AUTHZ_CACHE_MS,
  };
  agentCache.set(env, value);
  return value;
}

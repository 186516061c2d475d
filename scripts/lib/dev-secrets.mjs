// The Worker's secrets for local runs (`pnpm dev`, the benchmarks, the workerd tests), from one
// list: `secrets.required` in wrangler.jsonc. wrangler dev loads from .dev.vars only the secrets
// that list names (issue 28.6: OPERATOR_SECRET was written to .dev.vars but never reached the
// Worker), and `wrangler deploy` refuses to deploy while one of them is unset. A secret added there
// needs a way to be made here; test/node/secrets.test.ts fails otherwise.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { generateSigningKey } from "./signing-key.mjs";

const root = path.resolve(import.meta.dirname, "../..");

/** The key that marks "use the local Stripe stand-in" in .dev.vars. */
export const STANDIN_KEY = "sk_test_parley_standin";

/**
 * Secrets a developer may bring from their environment (a real OpenRouter or Stripe key): when set
 * there, `pnpm dev` writes them to .dev.vars, the only place wrangler dev reads secrets from.
 */
export const FROM_ENVIRONMENT = [
  "OPENROUTER_API_KEY",
  "STRIPE_SECRET_KEY",
  "STRIPE_WEBHOOK_SECRET",
];

/**
 * How each required secret is made for a local run. `OPENROUTER_API_KEY` is empty: the dev model
 * needs none (the Worker accepts an empty one only for a model on this machine).
 * @type {Record<string, () => Promise<string> | string>}
 */
export const DEV_SECRETS = {
  JWT_PRIVATE_KEY: async () => JSON.stringify(await generateSigningKey()),
  STRIPE_SECRET_KEY: () => STANDIN_KEY,
  STRIPE_WEBHOOK_SECRET: () => `whsec_${randomBytes(24).toString("hex")}`,
  ALERT_WEBHOOK_SECRET: () => randomBytes(24).toString("base64url"),
  ERASURE_HASH_KEY: () => randomBytes(32).toString("base64url"),
  APP_SECRETS_KEY: () => randomBytes(32).toString("base64url"),
  // The platform operator's secret: promotions and allowances (routes/operator.ts).
  OPERATOR_SECRET: () => randomBytes(32).toString("base64url"),
  OPENROUTER_API_KEY: () => "",
};

/** wrangler.jsonc as an object (JSON with comments and trailing commas). */
export function readWranglerConfig(file = path.join(root, "wrangler.jsonc")) {
  const text = readFileSync(file, "utf8")
    // Strings are kept whole; comments outside them go.
    .replace(/("(?:\\.|[^"\\])*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (_match, string) => string ?? "")
    .replace(/,(\s*[}\]])/g, "$1");
  return JSON.parse(text);
}

/** The secrets the Worker requires, as wrangler.jsonc declares them. */
export function requiredSecrets() {
  return readWranglerConfig().secrets?.required ?? [];
}

/**
 * Values for every required secret `existing` lacks (or has empty, unless empty is its dev value),
 * made as `DEV_SECRETS` says. Fails loudly for a required secret nothing here knows how to make.
 * @param {Record<string, string>} [existing]
 * @returns {Promise<Record<string, string>>}
 */
export async function missingDevSecrets(existing = {}) {
  const made = {};
  for (const name of requiredSecrets()) {
    const make = DEV_SECRETS[name];
    if (!make) {
      throw new Error(
        `wrangler.jsonc requires the secret ${name}, and scripts/lib/dev-secrets.mjs does not know how to make it for a local run`,
      );
    }
    if (!(name in existing)) made[name] = await make();
  }
  return made;
}

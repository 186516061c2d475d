import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { generateSigningKey } from "../../scripts/lib/signing-key.mjs";

const root = path.resolve(import.meta.dirname, "../..");

// A fresh signing key per run, in the secret the Worker reads; wrangler also looks for it in
// process.env (and warns when a required secret is missing).
process.env.JWT_PRIVATE_KEY ??= JSON.stringify(await generateSigningKey());
process.env.STRIPE_SECRET_KEY ??= "sk_test_parley";
process.env.STRIPE_WEBHOOK_SECRET ??= "whsec_test_parley";
process.env.ALERT_WEBHOOK_SECRET ??= "alert_secret_test";
process.env.ERASURE_HASH_KEY ??= "erasure_hash_key_test";
process.env.APP_SECRETS_KEY ??= "app_secrets_key_test";
process.env.OPERATOR_SECRET ??= "operator_secret_test_0123456789abcdef";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: path.join(root, "wrangler.jsonc") },
            miniflare: {
              bindings: {
                JWT_PRIVATE_KEY: process.env.JWT_PRIVATE_KEY as string,
                STRIPE_SECRET_KEY: process.env.STRIPE_SECRET_KEY as string,
                STRIPE_WEBHOOK_SECRET: process.env.STRIPE_WEBHOOK_SECRET as string,
                ALERT_WEBHOOK_SECRET: process.env.ALERT_WEBHOOK_SECRET as string,
                ERASURE_HASH_KEY: process.env.ERASURE_HASH_KEY as string,
                APP_SECRETS_KEY: process.env.APP_SECRETS_KEY as string,
                OPERATOR_SECRET: process.env.OPERATOR_SECRET as string,
                STRIPE_API_URL: inject("stripeUrl"),
                MODEL_BASE_URL: inject("devModelUrl"),
                MODEL_ID: "parley/dev",
                CATALOGUE_DEV_MODELS: "true",
                MODEL_STALL_TIMEOUT_MS: "1500",
                // As in production, where it is required: the tests' requests go to
                // https://parley.test (test/helpers.ts BASE), not a loopback host.
                PUBLIC_URL: "https://parley.test",
                TEST_MAILBOX_URL: inject("mailboxUrl"),
                // Exactly the mailbox (http on 127.0.0.1) may receive alert webhooks.
                ALERT_WEBHOOK_ALLOW_PRIVATE: new URL(inject("mailboxUrl")).host,
                // Exactly the test JWKS server may serve apps' JWKS over http on 127.0.0.1.
                JWKS_ALLOW_PRIVATE: new URL(inject("jwksUrl")).host,
                TEST_JWKS_URL: inject("jwksUrl"),
                TEST_MIGRATIONS: await readD1Migrations(
                  path.join(import.meta.dirname, "migrations"),
                ),
              },
            },
          })),
        ],
        test: {
          name: "workerd",
          include: ["test/**/*.test.ts"],
          exclude: ["test/node/**"],
          setupFiles: ["test/apply-migrations.ts"],
          globalSetup: ["test/global-setup.ts"],
        },
      },
      {
        test: {
          name: "node",
          include: ["test/node/**/*.test.ts", "src/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
        },
      },
    ],
  },
});

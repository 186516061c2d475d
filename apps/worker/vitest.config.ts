import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { missingDevSecrets, requiredSecrets } from "../../scripts/lib/dev-secrets.mjs";

const root = path.resolve(import.meta.dirname, "../..");

// Every secret wrangler.jsonc requires, for the Worker under test: fixed values some tests know,
// the rest made as `pnpm dev` makes them (a fresh signing key per run). wrangler also looks for
// them in process.env (and warns when a required secret is missing).
process.env.STRIPE_SECRET_KEY ??= "sk_test_parley";
process.env.STRIPE_WEBHOOK_SECRET ??= "whsec_test_parley";
process.env.ALERT_WEBHOOK_SECRET ??= "alert_secret_test";
process.env.ERASURE_HASH_KEY ??= "erasure_hash_key_test";
process.env.APP_SECRETS_KEY ??= "app_secrets_key_test";
process.env.OPERATOR_SECRET ??= "operator_secret_test_0123456789abcdef";
const present = Object.fromEntries(
  requiredSecrets().flatMap((name) => {
    const value = process.env[name];
    return value === undefined ? [] : [[name, value]];
  }),
);
Object.assign(process.env, await missingDevSecrets(present));
const secrets: Record<string, string> = Object.fromEntries(
  requiredSecrets().map((name) => [name, process.env[name] ?? ""]),
);

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            wrangler: { configPath: path.join(root, "wrangler.jsonc") },
            miniflare: {
              bindings: {
                ...secrets,
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
                // Parley's mail goes to the development mailbox, as under `pnpm dev`.
                MAIL_TRANSPORT: "dev",
                MAIL_DEV_URL: inject("devMailboxUrl"),
                MAIL_FROM: "Parley <noreply@parley.test>",
                // Exactly the tool servers (test/tool-servers.ts), each on its own port.
                TOOL_SOURCES_ALLOW_PRIVATE: [
                  inject("toolLabUrl"),
                  inject("toolHttpUrl"),
                  inject("shopUrl"),
                  inject("toolV2Url"),
                  inject("toolFlakyUrl"),
                  inject("toolDownUrl"),
                ]
                  .map((url) => new URL(url).host)
                  .join(","),
                // Short, so the timeout tests wait little (production: 15 s).
                TOOL_CALL_TIMEOUT_MS: "1500",
                TEST_TOOL_LAB_URL: inject("toolLabUrl"),
                TEST_TOOL_HTTP_URL: inject("toolHttpUrl"),
                TEST_SHOP_URL: inject("shopUrl"),
                TEST_TOOL_V2_URL: inject("toolV2Url"),
                TEST_TOOL_FLAKY_URL: inject("toolFlakyUrl"),
                TEST_TOOL_DOWN_URL: inject("toolDownUrl"),
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
          // A whole-flow test (an erasure with its verification scan, an export) takes 1-6 s on a
          // loaded 2-core machine; vitest's 5 s default failed them for time, not for what they
          // check. Nothing here asserts speed: benchmarks do (pnpm bench).
          testTimeout: 20_000,
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

#!/usr/bin/env node
// `pnpm dev`: the whole platform on one local port (API, agents, web app) plus, with no
// OPENROUTER_API_KEY, the local dev model. Run through pnpm so it gets Node 22 (root devDependency).
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { generateSigningKey } from "./lib/signing-key.mjs";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.PORT ?? 8787);
const devModelPort = Number(process.env.DEV_MODEL_PORT ?? 8789);
const standinPort = Number(process.env.STRIPE_STANDIN_PORT ?? 12111);
/** The key that marks "use the local Stripe stand-in" in .dev.vars. */
const STANDIN_KEY = "sk_test_parley_standin";
// Where local D1 and Durable Object state lives; tests point it at a temporary directory.
const persist = process.env.PERSIST_DIR ? ["--persist-to", process.env.PERSIST_DIR] : [];
const wrangler = path.join(
  path.dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
  "bin/wrangler.js",
);

function run(label, command, args) {
  console.log(`[dev] ${label}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`[dev] ${label} failed`);
    process.exit(result.status ?? 1);
  }
}

/**
 * Local secrets live in .dev.vars (git-ignored), made on first run: the token signing key, the
 * alert-webhook secret and, unless a real STRIPE_SECRET_KEY is configured, the Stripe stand-in's key
 * and webhook secret. Returns the values in force.
 */
async function ensureDevVars() {
  const file = path.join(root, ".dev.vars");
  let text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const read = () =>
    Object.fromEntries(
      [...text.matchAll(/^([A-Z0-9_]+)=(?:'([^']*)'|"([^"]*)"|(.*))$/gm)].map((m) => [
        m[1],
        m[2] ?? m[3] ?? m[4] ?? "",
      ]),
    );
  const add = (name, value) => {
    text += `${text && !text.endsWith("\n") ? "\n" : ""}${name}='${value}'\n`;
    console.log(`[dev] generated ${name} in .dev.vars`);
  };
  let vars = read();
  if (!vars.JWT_PRIVATE_KEY) add("JWT_PRIVATE_KEY", JSON.stringify(await generateSigningKey()));
  if (!vars.ALERT_WEBHOOK_SECRET)
    add("ALERT_WEBHOOK_SECRET", randomBytes(24).toString("base64url"));
  if (!vars.ERASURE_HASH_KEY) add("ERASURE_HASH_KEY", randomBytes(32).toString("base64url"));
  if (!vars.APP_SECRETS_KEY) add("APP_SECRETS_KEY", randomBytes(32).toString("base64url"));
  // The platform operator's secret: promotions and allowances (routes/operator.ts).
  if (!vars.OPERATOR_SECRET) add("OPERATOR_SECRET", randomBytes(32).toString("base64url"));
  if (!process.env.STRIPE_SECRET_KEY && !vars.STRIPE_SECRET_KEY) {
    add("STRIPE_SECRET_KEY", STANDIN_KEY);
    add("STRIPE_WEBHOOK_SECRET", `whsec_${randomBytes(24).toString("hex")}`);
  }
  writeFileSync(file, text, { mode: 0o600 });
  vars = read();
  return {
    ...vars,
    ...(process.env.STRIPE_SECRET_KEY ? { STRIPE_SECRET_KEY: process.env.STRIPE_SECRET_KEY } : {}),
  };
}

const children = [];
function start(label, command, args, env = {}) {
  const child = spawn(command, args, {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
  child.on("exit", (code, signal) => {
    console.log(`[dev] ${label} exited (${signal ?? code})`);
    shutdown(code ?? 1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
  setTimeout(() => process.exit(code), 500).unref();
}
process.on("SIGINT", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));

const devVars = await ensureDevVars();
run("building the web app", process.execPath, [
  path.join(root, "node_modules/turbo/bin/turbo"),
  "run",
  "build",
  "--filter=@parley/web",
  "--output-logs=errors-only",
]);
run("applying D1 migrations (local)", process.execPath, [
  wrangler,
  "d1",
  "migrations",
  "apply",
  "DB",
  "--local",
  ...persist,
]);

// Local alert webhooks and app JWKS (a server on this machine, over http) are fine in dev, never in
// production.
const vars = ["--var", "ALERT_WEBHOOK_ALLOW_PRIVATE:*", "--var", "JWKS_ALLOW_PRIVATE:*"];
if (!process.env.OPENROUTER_API_KEY) {
  start("dev model", process.execPath, [
    path.join(root, "packages/dev-model/src/cli.ts"),
    "--port",
    String(devModelPort),
  ]);
  vars.push("--var", `MODEL_BASE_URL:http://127.0.0.1:${devModelPort}/api/v1`);
  // The dev model's ids in the model catalogue (parley/dev, -fast, -large, -local).
  vars.push("--var", "CATALOGUE_DEV_MODELS:true");
}
if (devVars.STRIPE_SECRET_KEY === STANDIN_KEY) {
  // The webhook secret goes in the environment, not the arguments, which any local user can read
  // with `ps`.
  start(
    "stripe stand-in",
    process.execPath,
    [
      path.join(root, "packages/stripe-standin/src/cli.ts"),
      "--port",
      String(standinPort),
      "--webhook-url",
      `http://127.0.0.1:${port}/api/webhooks/stripe`,
    ],
    { STRIPE_WEBHOOK_SECRET: devVars.STRIPE_WEBHOOK_SECRET },
  );
  vars.push("--var", `STRIPE_API_URL:http://127.0.0.1:${standinPort}`);
}
start(
  "wrangler dev",
  process.execPath,
  [wrangler, "dev", "--port", String(port), "--ip", "127.0.0.1", ...persist, ...vars],
  {
    WRANGLER_SEND_METRICS: "false",
  },
);
console.log(`[dev] Parley on http://127.0.0.1:${port}`);

// `pnpm dev --example`: the example host app too (examples/host-app), once Parley answers.
if (process.argv.includes("--example")) {
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    const up = await fetch(`${base}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  start("example host app", process.execPath, [path.join(root, "examples/host-app/run.mjs")], {
    PARLEY_URL: base,
  });
}

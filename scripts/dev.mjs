#!/usr/bin/env node
// `pnpm dev`: the whole platform on one local port (API, agents, web app) plus, with no
// OPENROUTER_API_KEY, the local dev model. Run through pnpm so it gets Node 22 (root devDependency).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { FROM_ENVIRONMENT, missingDevSecrets, STANDIN_KEY } from "./lib/dev-secrets.mjs";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.PORT ?? 8787);
const devModelPort = Number(process.env.DEV_MODEL_PORT ?? 8789);
const standinPort = Number(process.env.STRIPE_STANDIN_PORT ?? 12111);
const mailboxPort = Number(process.env.DEV_MAILBOX_PORT ?? 8025);
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
 * Local secrets live in .dev.vars (git-ignored), the one place wrangler dev reads them from, and it
 * reads there only the secrets wrangler.jsonc requires (`secrets.required`). Every required secret
 * is made on first run (scripts/lib/dev-secrets.mjs: the token signing key, the webhook and
 * operator secrets, the Stripe stand-in's key...); the ones a developer brings in their environment
 * (a real OpenRouter or Stripe key) are written there too, or the Worker would never see them.
 * Returns the values in force.
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
  const set = (name, value, how) => {
    if (value.includes("'") || value.includes("\n")) {
      throw new Error(`[dev] ${name} cannot be written to .dev.vars (a quote or a line break)`);
    }
    const line = `${name}='${value}'`;
    const existing = new RegExp(`^${name}=.*$`, "m");
    if (existing.test(text)) text = text.replace(existing, () => line);
    else text += `${text && !text.endsWith("\n") ? "\n" : ""}${line}\n`;
    console.log(`[dev] ${how} ${name} in .dev.vars`);
  };
  let vars = read();
  for (const name of FROM_ENVIRONMENT) {
    const value = process.env[name];
    if (value !== undefined && value !== vars[name]) set(name, value, "wrote from the environment");
  }
  // Without a key in the environment the dev model answers, and needs none.
  if (process.env.OPENROUTER_API_KEY === undefined && vars.OPENROUTER_API_KEY) {
    set("OPENROUTER_API_KEY", "", "emptied (no key in the environment)");
  }
  for (const [name, value] of Object.entries(await missingDevSecrets(read()))) {
    set(name, value, "generated");
  }
  writeFileSync(file, text, { mode: 0o600 });
  vars = read();
  return vars;
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

// Local alert webhooks, app JWKS and tool sources (a server on this machine, over http) are fine in
// dev, never in production.
const vars = [
  "--var",
  "ALERT_WEBHOOK_ALLOW_PRIVATE:*",
  "--var",
  "JWKS_ALLOW_PRIVATE:*",
  "--var",
  "TOOL_SOURCES_ALLOW_PRIVATE:*",
];
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
// Mail goes to the development mailbox (packages/dev-mailbox): a page per message, nothing leaves
// this machine. MAIL_TRANSPORT set to another transport in the environment sends for real instead.
if (!process.env.MAIL_TRANSPORT || process.env.MAIL_TRANSPORT === "dev") {
  start("dev mailbox", process.execPath, [
    path.join(root, "packages/dev-mailbox/src/cli.ts"),
    "--port",
    String(mailboxPort),
  ]);
  vars.push("--var", "MAIL_TRANSPORT:dev", "--var", `MAIL_DEV_URL:http://127.0.0.1:${mailboxPort}`);
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
if (!process.env.MAIL_TRANSPORT || process.env.MAIL_TRANSPORT === "dev") {
  console.log(`[dev] Mail Parley sends: http://127.0.0.1:${mailboxPort}`);
}

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
    PARLEY_MAILBOX: `http://127.0.0.1:${mailboxPort}`,
  });
}

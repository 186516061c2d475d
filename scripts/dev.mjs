#!/usr/bin/env node
// `pnpm dev`: the whole platform on one local port (API, agents, web app) plus, with no
// OPENROUTER_API_KEY, the local dev model. Run through pnpm so it gets Node 22 (root devDependency).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { generateSigningKey } from "./lib/signing-key.mjs";

const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.PORT ?? 8787);
const devModelPort = Number(process.env.DEV_MODEL_PORT ?? 8789);
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

/** Local secrets live in .dev.vars (git-ignored); the signing key is generated on first run. */
async function ensureDevVars() {
  const file = path.join(root, ".dev.vars");
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (/^JWT_PRIVATE_KEY=/m.test(current)) return;
  const key = JSON.stringify(await generateSigningKey());
  writeFileSync(
    file,
    `${current}${current && !current.endsWith("\n") ? "\n" : ""}JWT_PRIVATE_KEY='${key}'\n`,
    {
      mode: 0o600,
    },
  );
  console.log("[dev] generated a local signing key in .dev.vars");
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

await ensureDevVars();
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

const vars = [];
if (!process.env.OPENROUTER_API_KEY) {
  start("dev model", process.execPath, [
    path.join(root, "packages/dev-model/src/cli.ts"),
    "--port",
    String(devModelPort),
  ]);
  vars.push("--var", `MODEL_BASE_URL:http://127.0.0.1:${devModelPort}/api/v1`);
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

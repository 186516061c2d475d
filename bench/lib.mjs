// Shared pieces of the benchmarks: start a Worker under wrangler dev (the runtime `pnpm dev` uses),
// time things, and summarize samples. Run through pnpm so Node 22 and wrangler's bin are used.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";

const wrangler = path.join(
  path.dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
  "bin/wrangler.js",
);

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/** Runs wrangler to completion (migrations and the like), with Node 22 and no metrics. */
export function wranglerRun(args) {
  const result = spawnSync(process.execPath, [wrangler, ...args], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  if (result.status !== 0) {
    throw new Error(`wrangler ${args.join(" ")} failed:\n${result.stdout}\n${result.stderr}`);
  }
}

/**
 * Starts `wrangler dev` for a config with its state in a temp dir; resolves once it answers.
 * `envFile` holds secrets (values may contain colons, which `--var` cannot carry); `prepare(state)`
 * runs before the server starts (D1 migrations); `env` adds to wrangler's environment.
 *
 * wrangler's local trace store is off unless `traced`: on, wrangler dev tails every Worker into a
 * collector in the same workerd process, which keeps every span (each fetch, D1 query, RPC and
 * storage call) in SQLite for the whole run, on the measured process's memory and CPU. Production's
 * observability runs outside the Worker's process, and the platform makes several times the bare
 * agent's spans per turn, so on it measures the dev tool (docs/2026-12-06-soak-memory.md).
 */
export async function startWorker(
  config,
  { vars = {}, readyPath = "/", envFile, prepare, inspectorPort, env = {}, traced = false } = {},
) {
  const port = await freePort();
  const state = mkdtempSync(path.join(os.tmpdir(), "parley-bench-"));
  prepare?.(state);
  const args = [
    wrangler,
    "dev",
    "--config",
    config,
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--persist-to",
    state,
  ];
  for (const [key, value] of Object.entries(vars)) args.push("--var", `${key}:${value}`);
  if (envFile) args.push("--env-file", envFile);
  if (inspectorPort) args.push("--inspector-port", String(inspectorPort));
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      ...(traced ? {} : { X_LOCAL_OBSERVABILITY: "false" }),
      ...env,
    },
  });
  let log = "";
  // BENCH_LOG=1 shows the Worker's own output (to trace a run); otherwise it is kept for errors.
  const echo = process.env.BENCH_LOG === "1";
  const keep = (c) => {
    // The tail is what an error shows; a long run must not keep all of wrangler's output.
    log = (log + c).slice(-20_000);
    if (echo) process.stderr.write(c);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  let exited = false;
  child.on("exit", () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      // A Worker that fails to build leaves wrangler's port open and the request unanswered:
      // each try gives up after a few seconds, so the deadline below is kept.
      await fetch(`${url}${readyPath}`, { signal: AbortSignal.timeout(5_000) });
      break;
    } catch {
      if (exited || Date.now() > deadline) {
        // Nothing of a failed start may outlive the benchmark (its workerd holds ports and pipes).
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {}
        rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
        throw new Error(`wrangler dev did not start:\n${log.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url,
    /** The `wrangler dev` process (its workerd processes are below it: proc.mjs `workerdOf`). */
    pid: child.pid,
    /** Its state directory (`--persist-to`), removed by `stop()`. */
    state,
    stop() {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      rmSync(state, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/**
 * The dev model in a process of its own (so the load's clients and the model do not share one event
 * loop); resolves with its base URL and a stop function.
 */
export async function startModelProcess({ latencyMs = 0, tokensPerSecond = 0 } = {}) {
  const cli = path.resolve(import.meta.dirname, "../packages/dev-model/src/cli.ts");
  const child = spawn(
    process.execPath,
    [
      cli,
      "--port",
      "0",
      "--latency-ms",
      String(latencyMs),
      "--tokens-per-second",
      String(tokensPerSecond),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`dev model exited (${code})`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

/** Fetches JSON, throwing on a non-2xx answer with its body. */
export async function json(url, init) {
  const res = await fetch(url, init);
  if (!res.ok)
    throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A random client address for `CF-Connecting-IP` (sign-up and sign-in are limited per address). */
export const clientIp = () =>
  `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;

/** The development mailbox of each platform started by `platform()` (bench/turns.mjs), by its URL. */
export const mailboxes = new Map();

/**
 * Signs a new user up on the platform at `base` (their first org comes with it) and, where the
 * platform's mail goes to a development mailbox, confirms the address from it (which brings the
 * sign-up grant); returns their token, that org's id, and `post(path, body)` as them.
 */
export async function signUp(base, label) {
  // A distinct local part per user: the sign-up grant is counted per email with `+tags` stripped.
  const email = `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.test`;
  const password = "benchmark password";
  const { accessToken } = await json(`${base}/api/auth/signup`, {
    method: "POST",
    // Sign-ups are limited per client address (5 a minute); each benchmark user comes from its own,
    // as real users do. `wrangler dev` keeps a CF-Connecting-IP the client sends (Cloudflare's
    // edge replaces it in production).
    headers: {
      "content-type": "application/json",
      "cf-connecting-ip": clientIp(),
    },
    body: JSON.stringify({ email, password, name: label }),
  });
  const mailbox = mailboxes.get(base);
  if (mailbox) {
    const query = new URLSearchParams({ to: email, kind: "verify_email", wait: "20000" });
    const { items } = await json(`${mailbox}/api/messages?${query}`);
    const token = new URL(items[0].links[0]).hash.slice(1);
    await json(`${base}/api/auth/verify-email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
  }
  const auth = { authorization: `Bearer ${accessToken}` };
  const orgs = await json(`${base}/api/orgs`, { headers: auth });
  const post = (p, body) =>
    json(`${base}${p}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body: JSON.stringify(body),
    });
  return { token: accessToken, orgId: orgs.items[0].id, post, email, password };
}

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return {
    n: sorted.length,
    min: sorted[0],
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: sorted.at(-1),
  };
}

export function machine() {
  const cpus = os.cpus();
  return `${os.type()} ${os.release()}, ${cpus.length} x ${cpus[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
}

export const ms = (n) => `${n.toFixed(1)} ms`;

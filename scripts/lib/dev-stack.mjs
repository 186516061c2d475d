// The platform started the way `pnpm dev` starts it (scripts/dev.mjs: web build, migrations,
// wrangler dev, dev model, Stripe stand-in), on free ports with its state in a temporary directory,
// for tests that drive it from outside (the README walk-through, the browser test).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(),
      );
    });
  });
}

/** @param {{ timeoutMs?: number }} [options] */
export async function startDevStack({ timeoutMs = 150_000 } = {}) {
  const state = await mkdtemp(path.join(tmpdir(), "parley-dev-state-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let log = "";
  const child = spawn(process.execPath, [path.join(root, "scripts/dev.mjs")], {
    cwd: root,
    env: {
      // The platform must start as on a laptop: no test secrets from the environment.
      ...Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !/^(JWT_|STRIPE_|ALERT_|ERASURE_)/.test(key)),
      ),
      PORT: String(port),
      DEV_MODEL_PORT: String(await freePort()),
      STRIPE_STANDIN_PORT: String(await freePort()),
      PERSIST_DIR: state,
      OPENROUTER_API_KEY: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
    // Its own process group, so stop() ends wrangler, the dev model and the stand-in with it.
    detached: true,
  });
  child.stdout.on("data", (chunk) => {
    log += chunk;
  });
  child.stderr.on("data", (chunk) => {
    log += chunk;
  });
  const stop = async () => {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    await rm(state, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(`${base}/api/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pnpm dev did not become healthy in time\n${log.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { base, port, log: () => log, stop };
}

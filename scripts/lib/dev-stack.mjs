// The platform started the way `pnpm dev` starts it (scripts/dev.mjs: web build, migrations,
// wrangler dev, dev model, Stripe stand-in), on free ports with its state in a temporary directory,
// for tests that drive it from outside (the README walk-through, the browser test).
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");

/**
 * `count` distinct free ports. The listeners stay open until all are taken, so the kernel cannot hand
 * the same port out twice (three services on one port would fail with EADDRINUSE).
 */
async function freePorts(count) {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => {
    const address = server.address();
    if (typeof address !== "object" || !address) throw new Error("no port");
    return address.port;
  });
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * @param {{ timeoutMs?: number, example?: boolean }} [options] `example`: the example host app too
 * (`pnpm dev --example`), on its own free port, its set-up kept in the state directory.
 */
export async function startDevStack({ timeoutMs = 150_000, example = false } = {}) {
  const state = await mkdtemp(path.join(tmpdir(), "parley-dev-state-"));
  const [port, modelPort, standinPort, examplePort, mailboxPort] = await freePorts(5);
  const base = `http://127.0.0.1:${port}`;
  const exampleBase = `http://localhost:${examplePort}`;
  const exampleState = path.join(state, "host-app.json");
  let log = "";
  const args = [path.join(root, "scripts/dev.mjs"), ...(example ? ["--example"] : [])];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      // The platform must start as on a laptop: no test secrets from the environment.
      ...Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !/^(JWT_|STRIPE_|ALERT_|ERASURE_)/.test(key)),
      ),
      PORT: String(port),
      DEV_MODEL_PORT: String(modelPort),
      STRIPE_STANDIN_PORT: String(standinPort),
      DEV_MAILBOX_PORT: String(mailboxPort),
      MAIL_TRANSPORT: "",
      PERSIST_DIR: state,
      OPENROUTER_API_KEY: "",
      HOST_APP_PORT: String(examplePort),
      HOST_APP_STATE: exampleState,
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
      if (
        (await fetch(`${base}/api/health`)).ok &&
        (await fetch(`http://127.0.0.1:${mailboxPort}/api/messages`)).ok &&
        (!example || (await fetch(exampleBase)).ok)
      ) {
        break;
      }
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pnpm dev did not become healthy in time\n${log.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    base,
    port,
    /** The development mailbox: its pages, and `/api/messages` for tests. */
    mailbox: `http://127.0.0.1:${mailboxPort}`,
    exampleBase: example ? exampleBase : null,
    exampleState: example ? exampleState : null,
    log: () => log,
    stop,
  };
}

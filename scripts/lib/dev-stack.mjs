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

/** A service could not bind its port: another process took it after `freePorts` let it go. */
class PortTaken extends Error {}

/** How many times a stack is started on fresh ports when one of its ports was taken meanwhile. */
const PORT_ATTEMPTS = 3;

/**
 * @param {{ timeoutMs?: number, example?: boolean }} [options] `example`: the example host app too
 * (`pnpm dev --example`), on its own free port, its set-up kept in the state directory.
 *
 * A free port is free when `freePorts` closes its listener, not when a service binds it later: on a
 * busy machine (the worker tests' workerd starting beside the browser tests) another process can
 * take it in between, and wrangler exits with "Address already in use". The stack is then started
 * again on fresh ports, within the same time limit.
 */
export async function startDevStack({ timeoutMs = 150_000, example = false } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce({ deadline, example });
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

/** One start of the stack on fresh free ports, healthy by `deadline` (epoch ms). */
async function startOnce({ deadline, example }) {
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
  for (;;) {
    // Exited before it was healthy (scripts/dev.mjs stops every service when one exits): waiting
    // out the deadline would tell nothing more.
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      if (/EADDRINUSE|Address already in use/.test(log)) {
        throw new PortTaken(`a port of the stack was taken\n${log.slice(-3000)}`);
      }
      throw new Error(`pnpm dev exited before it was healthy\n${log.slice(-3000)}`);
    }
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

/**
 * The test fixture: the bare baseline agent (test/fixture) under `wrangler dev` on a free port,
 * answering through a dev model on another free port, with its state in a temporary directory.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type DevModel, startDevModel } from "@parley/dev-model";

const fixtureDir = path.join(import.meta.dirname, "fixture");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(10);
  }
}

export interface Fixture {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  devModel: DevModel;
  /** What wrangler printed, for failure messages. */
  log(): string;
  close(): Promise<void>;
}

/** A fresh instance of the fixture's agent (a unique name unless given). */
export function agentUrl(origin: string, name: string = randomUUID()): string {
  return `${origin}/agents/bare-chat-agent/${name}`;
}

/**
 * wrangler's own entry run with this process's Node: `.bin/wrangler` would run the system Node,
 * which wrangler 4.164 refuses (../shared/TOOLCHAIN.md).
 */
function wranglerEntry(): string {
  const pkg = createRequire(import.meta.url).resolve("wrangler/package.json");
  return path.join(path.dirname(pkg), "bin/wrangler.js");
}

async function waitUntilServing(origin: string, child: ChildProcess, log: () => string) {
  const deadline = Date.now() + 50_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited:\n${log()}`);
    try {
      // The fixture answers any path outside /agents with its own JSON 404.
      const response = await fetch(`${origin}/__ready`);
      if (response.status === 404) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`wrangler dev did not start in time:\n${log().slice(-3000)}`);
}

export async function startFixture(): Promise<Fixture> {
  const devModel = await startDevModel({ port: 0 });
  const state = await mkdtemp(path.join(tmpdir(), "parley-chat-client-"));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let output = "";
  const child = spawn(
    process.execPath,
    [
      wranglerEntry(),
      "dev",
      "--config",
      path.join(fixtureDir, "wrangler.jsonc"),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(await freePort()),
      "--persist-to",
      state,
      "--var",
      `DEV_MODEL_URL:${devModel.url}`,
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: fixtureDir,
      // its own process group, so close() ends workerd too
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    },
  );
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const close = async () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }, 5_000);
      await exited;
      clearTimeout(timer);
    }
    await devModel.close();
    await rm(state, { recursive: true, force: true });
  };

  try {
    await waitUntilServing(origin, child, () => output);
  } catch (error) {
    await close();
    throw error;
  }
  return {
    origin,
    devModel,
    log: () => output,
    close,
  };
}

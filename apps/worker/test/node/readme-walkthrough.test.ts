import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The README's curl walk-through, run as written against the platform started the way `pnpm dev`
 * starts it (scripts/dev.mjs), with its state in a temporary directory.
 */
const root = path.resolve(import.meta.dirname, "../../../..");

function freePort(): Promise<number> {
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

async function waitForHealth(base: string, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/api/health`);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("pnpm dev did not become healthy in time");
}

let dev: ChildProcess | undefined;
let state: string;
let work: string;
let port: number;
let log = "";

beforeAll(async () => {
  state = await mkdtemp(path.join(tmpdir(), "parley-dev-state-"));
  work = await mkdtemp(path.join(tmpdir(), "parley-walkthrough-"));
  port = await freePort();
  const child = spawn(process.execPath, [path.join(root, "scripts/dev.mjs")], {
    cwd: root,
    env: {
      // The vitest config puts test secrets in process.env; the platform must start as on a laptop.
      ...Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !/^(JWT_|STRIPE_|ALERT_)/.test(key)),
      ),
      PORT: String(port),
      DEV_MODEL_PORT: String(await freePort()),
      STRIPE_STANDIN_PORT: String(await freePort()),
      PERSIST_DIR: state,
      OPENROUTER_API_KEY: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  dev = child;
  child.stdout?.on("data", (chunk: Buffer) => {
    log += chunk;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    log += chunk;
  });
  await waitForHealth(`http://127.0.0.1:${port}`, Date.now() + 90_000).catch((error) => {
    throw new Error(`${error}\n${log.slice(-3000)}`);
  });
}, 120_000);

afterAll(async () => {
  if (dev?.pid) process.kill(-dev.pid, "SIGTERM");
  await rm(state, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe("README walk-through", () => {
  it("signs up, creates a project, opens a session and tops up with curl, as written", async () => {
    const readme = await readFile(path.join(root, "README.md"), "utf8");
    const block = readme.split("With `pnpm dev` running:\n\n```sh\n")[1]?.split("```")[0];
    expect(block).toBeDefined();
    const script = (block ?? "").replace(
      "BASE=http://127.0.0.1:8787",
      `BASE=http://127.0.0.1:${port}`,
    );
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], {
      cwd: work,
    });
    expect(stdout).toContain('"email":"ada@example.com"');
    expect(stdout).toMatch(/"role":"owner"/);
    expect(stdout).toMatch(/"id":"ses_[0-9a-z]{26}"/);
    expect(stdout).toMatch(/"title":"First draft"/);
    expect(stdout).toMatch(/"accessToken":"ey/);
    // $5 sign-up grant + the $20 top-up, credited by the stand-in's signed webhook.
    expect(stdout).toMatch(/"availableMicros":25000000/);
  });
});

/**
 * The CLI as `pnpm dev` runs it, and the promise that closing leaves nothing scheduled.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

/** Starts the CLI and resolves with its first stdout line. */
async function start(args: string[], env: Record<string, string> = {}): Promise<string> {
  const proc = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child = proc;
  let out = "";
  proc.stdout.setEncoding("utf8");
  for await (const chunk of proc.stdout) {
    out += chunk;
    if (out.includes("\n")) break;
  }
  return out.split("\n")[0] ?? "";
}

describe("cli", () => {
  it("prints its URL, serves the API, and exits 0 on SIGTERM", async () => {
    const line = await start(["--port", "0", "--webhook-secret", "whsec_cli"]);
    const match = /^stripe stand-in listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
    expect(match).not.toBeNull();
    const response = await fetch(`${match?.[1]}/v1/charges/ch_test_nope`, {
      headers: { authorization: "Bearer sk_test_cli" },
    });
    expect(response.status).toBe(404);
    child?.kill("SIGTERM");
    const [code] = await once(child as ChildProcess, "exit");
    expect(code).toBe(0);
  });

  it("takes its port from STRIPE_STANDIN_PORT when no flag is given", async () => {
    const line = await start([], { STRIPE_STANDIN_PORT: "0", STRIPE_WEBHOOK_SECRET: "whsec_env" });
    expect(line).toMatch(/^stripe stand-in listening on http:\/\/127\.0\.0\.1:\d+$/);
    child?.kill("SIGINT");
    const [code] = await once(child as ChildProcess, "exit");
    expect(code).toBe(0);
  });

  it("refuses a webhook secret that is not whsec_", async () => {
    const failure = await run(process.execPath, [
      cli,
      "--port",
      "0",
      "--webhook-secret",
      "nope",
    ]).catch((e: { code: number; stderr: string }) => e);
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr).toContain("must start with whsec_");
  });
});

describe("close", () => {
  it("cancels pending retries and in-flight deliveries: the process exits by itself", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/close-and-exit.ts", import.meta.url));
    const started = Date.now();
    const { stdout } = await run(process.execPath, [fixture], { timeout: 5000 });
    const result = JSON.parse(stdout) as { deliveries: [number | null, boolean][]; events: number };
    // The first attempt to the failing endpoint was recorded and its retry was pending.
    expect(result.deliveries[0]).toEqual([500, true]);
    expect(result.events).toBe(4);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

/**
 * `pnpm chat` as a person uses it, with piped stdin, against the fixture agent (`--agent-url`:
 * the bare agent needs no login).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import path from "node:path";
import { devReply } from "@parley/dev-model/reply";
import { afterEach, describe, expect, inject, it } from "vitest";
import { agentUrl, waitFor } from "./helpers.ts";

const origin = inject("fixtureOrigin");
const cli = path.join(import.meta.dirname, "../src/cli.ts");
const running: ChildProcessWithoutNullStreams[] = [];

function startCli(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { stdio: "pipe" });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    type: (line: string) => child.stdin.write(`${line}\n`),
  };
}

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("pnpm chat", () => {
  it("streams a reply, shows the transcript on connect, and quits", async () => {
    const url = agentUrl(origin);
    const first = startCli(["--agent-url", url]);
    first.type("Hello from the terminal");
    first.type("/quit");
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain("connected to bare-chat-agent");
    expect(first.stdout()).toContain(`assistant> ${devReply("Hello from the terminal")}\n`);

    const second = startCli(["--agent-url", url, "--history", "1"]);
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(second.stdout()).toContain("(1 earlier messages; /history shows all)");
    expect(second.stdout()).toContain(`assistant> ${devReply("Hello from the terminal")}\n`);
  });

  it("aborts a streaming reply with /abort, and with Ctrl-C (a second one exits)", async () => {
    const session = startCli(["--agent-url", agentUrl(origin)]);
    session.type("Slow reply please [[tps:20]]");
    await waitFor(() => session.stdout().includes("assistant> Dev model"));
    session.type("/abort");
    await waitFor(() => session.stdout().includes("[aborted]"));

    session.type("Another slow one [[tps:20]]");
    await waitFor(() => session.stdout().split("assistant> Dev model").length === 3);
    session.child.kill("SIGINT");
    await waitFor(() => session.stdout().split("[aborted]").length === 3);
    session.child.kill("SIGINT");
    session.child.kill("SIGINT");
    expect(await session.exited).toBe(130);
    expect(session.stdout()).toContain("[aborting]");
  });

  it("reports a refused connection with the platform's error", async () => {
    const refused = startCli(["--agent-url", agentUrl(origin), "--token", "bad"]);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toContain(
      "The agent refused the connection: 401 unauthorized: The token is not valid.",
    );
  });
});

/**
 * The CLI as `pnpm dev` runs it (Node's own TypeScript stripping, no build step): it starts,
 * prints its URL, serves, logs no address, and exits 0 on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createMimeMessage } from "mimetext";
import { afterEach, describe, expect, it } from "vitest";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

describe("cli", () => {
  it("prints its URL, keeps mail, logs no address, and exits 0 on SIGTERM", async () => {
    const proc = spawn(process.execPath, [cli, "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = proc;
    let out = "";
    let err = "";
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (chunk: string) => {
      err += chunk;
    });
    proc.stdout.setEncoding("utf8");
    for await (const chunk of proc.stdout) {
      out += chunk;
      if (out.includes("\n")) break;
    }
    const url = /^dev mailbox listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(
      out.split("\n")[0] ?? "",
    )?.[1];
    expect(url, `${out}${err}`).toBeDefined();
    const message = createMimeMessage();
    message.setSender({ addr: "noreply@parley.test" });
    message.setTo({ addr: "secret-person@example.test" });
    message.setSubject("Hello");
    message.setHeader("X-Parley-Kind", "invitation");
    message.addMessage({ contentType: "text/plain", data: "hi" });
    const sent = await fetch(`${url}/api/send_raw`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        from: "noreply@parley.test",
        recipients: ["secret-person@example.test"],
        mime_message: message.asRaw(),
      }),
    });
    expect(sent.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(err).toContain("kept #1 (invitation)");
    expect(err).not.toContain("secret-person");
    proc.kill("SIGTERM");
    const [code] = await once(proc, "exit");
    expect(code).toBe(0);
  });
});

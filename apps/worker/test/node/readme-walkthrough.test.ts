import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../../scripts/lib/dev-stack.mjs";

/**
 * The README's curl walk-through, run as written against the platform started the way `pnpm dev`
 * starts it (scripts/dev.mjs), with its state in a temporary directory.
 */
const root = path.resolve(import.meta.dirname, "../../../..");

let stack: DevStack;
let work: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), "parley-walkthrough-"));
  stack = await startDevStack({ timeoutMs: 90_000 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(work, { recursive: true, force: true });
});

describe("README walk-through", () => {
  it("signs up, creates a project, opens a session and tops up with curl, as written", async () => {
    const readme = await readFile(path.join(root, "README.md"), "utf8");
    const block = readme.split("With `pnpm dev` running:\n\n```sh\n")[1]?.split("```")[0];
    expect(block).toBeDefined();
    const script = (block ?? "")
      .replace("BASE=http://127.0.0.1:8787", `BASE=${stack.base}`)
      .replace("MAILBOX=http://127.0.0.1:8025", `MAILBOX=${stack.mailbox}`);
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", script], {
      cwd: work,
    });
    // A new person per run (the walk-through works again on a second run).
    expect(stdout).toMatch(/"email":"ada-\d+@example\.com"/);
    expect(stdout).toMatch(/"role":"owner"/);
    // The address, confirmed by the link read from the development mailbox.
    expect(stdout).toMatch(/"changed":false/);
    expect(stdout).toMatch(/"emailVerified":true/);
    expect(stdout).toMatch(/"id":"ses_[0-9a-z]{26}"/);
    expect(stdout).toMatch(/"title":"First draft"/);
    expect(stdout).toMatch(/"title":"Launch plan, first draft"/);
    expect(stdout).toMatch(/"ownerLabel":"Ada"/);
    expect(stdout).toMatch(/"accessToken":"ey/);
    // The socket ticket, in place of a token in the URL.
    expect(stdout).toMatch(/"ticket":"ct_[\w-]{43}"/);
    // $5 sign-up grant + the $20 top-up, credited by the stand-in's signed webhook.
    expect(stdout).toMatch(/"availableMicros":25000000/);
    // A card saved on the stand-in's setup page, and one automatic $10 charge for the crossing.
    expect(stdout).toMatch(/"last4":"4242"/);
    expect(stdout).toMatch(/"monthChargedMicros":10000000/);
  });
});

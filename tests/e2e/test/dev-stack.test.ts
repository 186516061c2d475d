import { Server } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { type DevStack, startDevStack } from "../../../scripts/lib/dev-stack.mjs";

/**
 * The harness every browser suite starts from (scripts/lib/dev-stack.mjs). It picks free ports and
 * lets them go before the services bind them: on a busy machine another process can take one in
 * between (the worker tests' workerd, starting beside the browser tests, once took wrangler's).
 */
let stack: DevStack | undefined;
let held: Server | undefined;

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => (held ? held.close(resolve) : resolve(undefined)));
});

describe("the dev stack", () => {
  it("starts again on fresh ports when one was taken between choosing it and binding it", async () => {
    // The first port the harness lets go (wrangler's) stays taken, as by another process.
    const close = Server.prototype.close;
    let taken: number | undefined;
    Server.prototype.close = function (this: Server, callback?: (error?: Error) => void) {
      if (held === undefined) {
        held = this;
        // Like a service of another process: it takes the connection and does not speak HTTP.
        this.on("connection", (socket) => socket.destroy());
        const address = this.address();
        taken = typeof address === "object" && address ? address.port : undefined;
        callback?.();
        return this;
      }
      return close.call(this, callback);
    };
    try {
      stack = await startDevStack({ timeoutMs: 150_000 });
    } finally {
      Server.prototype.close = close;
    }
    expect(taken).toBeGreaterThan(0);
    expect(stack.port).not.toBe(taken);
    expect((await fetch(`${stack.base}/api/health`)).ok).toBe(true);
  }, 180_000);
});

import { describe, expect, it } from "vitest";
import { isTransientStorageError, withRetry } from "./retry.ts";

const noSleep = async () => {};

describe("withRetry", () => {
  it("retries transient errors with backoff, then succeeds", async () => {
    const delays: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new Error("SQLITE_BUSY: database is locked");
        return "ok";
      },
      {
        attempts: 5,
        baseDelayMs: 10,
        isTransient: isTransientStorageError,
        sleep: async (ms) => void delays.push(ms),
      },
    );
    expect(result).toBe("ok");
    expect(calls).toBe(3);
    expect(delays).toEqual([10, 20]);
  });

  it("gives up after the last attempt and rethrows", async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw new Error("SQLITE_BUSY");
      },
      { attempts: 4, baseDelayMs: 1, isTransient: isTransientStorageError, sleep: noSleep },
    );
    await expect(failing).rejects.toThrow("SQLITE_BUSY");
    expect(calls).toBe(4);
  });

  it("rethrows other errors at once", async () => {
    let calls = 0;
    const failing = withRetry(
      async () => {
        calls++;
        throw new Error("SQLITE_CONSTRAINT: UNIQUE constraint failed");
      },
      { attempts: 4, baseDelayMs: 1, isTransient: isTransientStorageError, sleep: noSleep },
    );
    await expect(failing).rejects.toThrow("UNIQUE");
    expect(calls).toBe(1);
  });
});

import { AppError } from "@parley/shared";
import { APICallError, type UIMessage, type UIMessageChunk } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  announceFailure,
  endOfReply,
  failureCode,
  mergeLate,
  modelFailure,
  ReplyEndings,
  replyEnding,
  StallGuard,
} from "./reply-endings.ts";

const reply = (id: string, turnId: string): UIMessage => ({
  id,
  role: "assistant",
  metadata: { turnId },
  parts: [{ type: "text", text: "partial" }],
});
const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] };

describe("replyEnding", () => {
  it("names how a reply ended from the abort reason and the stream's error", () => {
    const aborted = (reason?: string) => {
      const controller = new AbortController();
      controller.abort(reason);
      return controller.signal;
    };
    expect(replyEnding(undefined, undefined)).toBeNull();
    expect(replyEnding(aborted(), undefined)).toEqual({ finish: "stopped" });
    // The stop cut the fetch, and the stream reported that as an error: still the member's stop.
    expect(replyEnding(aborted(), "model_error")).toEqual({ finish: "stopped" });
    expect(replyEnding(aborted("access ended"), undefined)).toEqual({
      finish: "stopped",
      code: "access_ended",
    });
    expect(replyEnding(aborted("model stalled"), "x")).toEqual({
      finish: "failed",
      code: "model_stalled",
    });
    expect(replyEnding(undefined, "model_error")).toEqual({
      finish: "failed",
      code: "model_error",
    });
    expect(failureCode(new AppError("forbidden", "no"))).toBe("forbidden");
    expect(failureCode(new Error("boom"))).toBe("model_error");
  });
});

describe("modelFailure", () => {
  const http = (statusCode: number, headers: Record<string, string> = {}) =>
    new APICallError({
      message: "Rate limit exceeded",
      url: "http://model.invalid/chat/completions",
      requestBodyValues: {},
      statusCode,
      responseHeaders: headers,
    });

  it("tells a rate-limited member when to try again, in Retry-After's seconds or date", () => {
    expect(modelFailure(http(429, { "retry-after": "30" }), "generic")).toEqual({
      code: "rate_limited",
      message:
        "The model provider is limiting requests right now. Please try again in 30 seconds; nothing was charged for this message.",
    });
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    expect(modelFailure(http(429, { "retry-after": inAMinute }), "").message).toMatch(
      /try again in (59|60|61) seconds;/,
    );
    const unusables: Record<string, string>[] = [
      {},
      { "retry-after": "soon" },
      { "retry-after": "0" },
    ];
    for (const unusable of unusables) {
      expect(modelFailure(http(429, unusable), "").message).toContain("Please try again shortly;");
    }
    expect(failureCode(http(429))).toBe("rate_limited");
  });

  it("keeps other failures generic, and our own errors as they are", () => {
    expect(modelFailure(http(503, { "retry-after": "5" }), "generic")).toEqual({
      code: "model_error",
      message: "generic",
    });
    // A mid-stream error may have cost something: it is not a rate limit that charged nothing.
    expect(modelFailure({ code: 429, message: "Rate limit exceeded" }, "generic").code).toBe(
      "model_error",
    );
    expect(modelFailure(new AppError("forbidden", "no writes"), "generic")).toEqual({
      code: "forbidden",
      message: "no writes",
    });
  });

  it("announces only a rate limit to the chat's sockets, as a typed parley_error", () => {
    const sent: string[] = [];
    const agent = { broadcast: (frame: string) => sent.push(frame) };
    expect(announceFailure(agent, "req-1", new Error("boom"))).toBe("model_error");
    expect(sent).toEqual([]);
    expect(announceFailure(agent, "req-2", http(429, { "retry-after": "1" }))).toBe("rate_limited");
    expect(sent.map((frame) => JSON.parse(frame))).toEqual([
      {
        type: "parley_error",
        requestId: "req-2",
        error: {
          code: "rate_limited",
          message:
            "The model provider is limiting requests right now. Please try again in 1 second; nothing was charged for this message.",
        },
      },
    ]);
  });
});

describe("ReplyEndings", () => {
  it("merges the ending into its reply once, hands over what comes later, and drops stale ones", () => {
    const endings = new ReplyEndings();
    const later = Promise.resolve({ priceMicros: 12 });
    endings.expect("turn-old", () => ({ now: { finish: "stopped" } }));
    endings.expect("turn-1", () => ({ now: { finish: "stopped" }, later }));
    const late: string[] = [];
    const merged = endings.merge(
      [user, reply("a0", "turn-old"), reply("a1", "turn-1")],
      (id, p) => {
        expect(p).toBe(later);
        late.push(id);
      },
    );
    expect(merged[1]?.metadata).toEqual({ turnId: "turn-old" }); // dropped: a newer turn replaced it
    expect(merged[2]?.metadata).toEqual({ turnId: "turn-1", finish: "stopped" });
    expect(late).toEqual(["turn-1"]);
    // Once merged, a later store of the same transcript changes nothing.
    const again = [user, reply("a1", "turn-1")];
    expect(endings.merge(again, () => late.push("again"))).toBe(again);
    expect(late).toEqual(["turn-1"]);
  });

  it("leaves a completed reply as it is", () => {
    const endings = new ReplyEndings();
    endings.expect("turn-1", () => null);
    const messages = [reply("a1", "turn-1")];
    expect(endings.merge(messages, () => undefined)[0]).toBe(messages[0]);
  });
});

describe("mergeLate", () => {
  it("merges into the turn's reply if it is still there, else says there is nothing to write", () => {
    const messages = [user, reply("a1", "turn-1")];
    expect(mergeLate(messages, "turn-1", { priceMicros: 5 })?.[1]?.metadata).toEqual({
      turnId: "turn-1",
      priceMicros: 5,
    });
    expect(messages[1]?.metadata).toEqual({ turnId: "turn-1" }); // not changed in place
    expect(mergeLate([user], "turn-1", { priceMicros: 5 })).toBeNull();
  });
});

describe("StallGuard", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires after the timeout of silence, however late the last chunk came, and not after done", () => {
    vi.useFakeTimers();
    const stalls: number[] = [];
    const start = Date.now();
    const guard = new StallGuard(1_000, () => stalls.push(Date.now() - start));
    // Chunks every 600 ms keep it quiet for as long as they come.
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(600);
      guard.touch();
    }
    expect(stalls).toEqual([]);
    // Then silence: it fires a full timeout after the last chunk (at 3,000 ms), once.
    vi.advanceTimersByTime(5_000);
    expect(stalls).toEqual([4_000]);

    const quiet: number[] = [];
    const ended = new StallGuard(1_000, () => quiet.push(1));
    vi.advanceTimersByTime(500);
    expect(ended.done(() => "result")).toBe("result");
    vi.advanceTimersByTime(5_000);
    expect(quiet).toEqual([]);
  });

  it("sets no timer per chunk: a chunk only moves the deadline", () => {
    vi.useFakeTimers();
    const guard = new StallGuard(1_000, () => {});
    const set = vi.spyOn(globalThis, "setTimeout");
    const clear = vi.spyOn(globalThis, "clearTimeout");
    for (let i = 0; i < 100; i++) guard.touch();
    expect(set).not.toHaveBeenCalled();
    expect(clear).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(1);
    guard.done(() => null);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("endOfReply", () => {
  async function through(chunks: UIMessageChunk[]): Promise<UIMessageChunk[]> {
    const out: UIMessageChunk[] = [];
    const stream = new ReadableStream<UIMessageChunk>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }).pipeThrough(endOfReply(() => ({ priceMicros: 7 })));
    for await (const chunk of stream) out.push(chunk);
    return out;
  }

  it("writes the metadata just before finish, and leaves out a step that made no call", async () => {
    const text: UIMessageChunk[] = [
      { type: "start-step" },
      { type: "text-start", id: "a" },
      { type: "text-delta", id: "a", delta: "hi" },
      { type: "text-end", id: "a" },
      { type: "finish-step" },
    ];
    // The second step is a call the metering middleware refused: nothing between its bounds.
    const out = await through([
      { type: "start" },
      ...text,
      { type: "start-step" },
      { type: "finish-step" },
      { type: "finish" },
    ]);
    expect(out.map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      "text-delta",
      "text-end",
      "finish-step",
      "message-metadata",
      "finish",
    ]);
    expect(out.at(-2)).toEqual({ type: "message-metadata", messageMetadata: { priceMicros: 7 } });
    // A stream cut right after a step began still hands that step on.
    expect((await through([{ type: "start-step" }])).map((chunk) => chunk.type)).toEqual([
      "start-step",
    ]);
  });
});

import type { UIMessageChunk } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { coalesceDeltas, deltaCoalescer, PAUSE_WINDOWS, stagedStream } from "./coalesce.ts";
import { endOfReply, endOfReplyStage } from "./reply-endings.ts";

const text = (delta: string, id = "t1"): UIMessageChunk => ({ type: "text-delta", id, delta });

/** Writes chunks with the given pauses between them and collects what comes out. */
async function run(windowMs: number, script: (UIMessageChunk | number)[]) {
  const stream = coalesceDeltas(windowMs);
  const out: UIMessageChunk[] = [];
  const reading = (async () => {
    const reader = stream.readable.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      out.push(value);
    }
  })();
  const writer = stream.writable.getWriter();
  for (const step of script) {
    if (typeof step === "number") await new Promise((r) => setTimeout(r, step));
    else await writer.write(step);
  }
  await writer.close();
  await reading;
  return out;
}

describe("coalesceDeltas", () => {
  it("sends a part's first delta at once, merges the rest within the window, and keeps the text", async () => {
    const out = await run(1_000, [
      { type: "text-start", id: "t1" },
      text("Hello"),
      text(" wide"),
      text(" world"),
      { type: "text-end", id: "t1" },
      { type: "finish" },
    ]);
    expect(out).toEqual([
      { type: "text-start", id: "t1" },
      text("Hello"),
      text(" wide world"),
      { type: "text-end", id: "t1" },
      { type: "finish" },
    ]);
  });

  it("flushes what waits when the window passes, and never merges across parts or kinds", async () => {
    const out = await run(20, [
      text("a"),
      text("b"),
      60,
      text("c"),
      { type: "reasoning-delta", id: "r1", delta: "x" },
      { type: "reasoning-delta", id: "r1", delta: "y" },
      text("d", "t2"),
    ]);
    expect(out).toEqual([
      text("a"),
      text("b"),
      text("c"),
      { type: "reasoning-delta", id: "r1", delta: "x" },
      { type: "reasoning-delta", id: "r1", delta: "y" },
      text("d", "t2"),
    ]);
  });

  it("passes every chunk through unchanged with a window of 0", async () => {
    const chunks = [text("a"), text("b"), text("c")];
    expect(await run(0, chunks)).toEqual(chunks);
  });
});

describe("coalesceDeltas over a steady stream", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** `count` deltas `everyMs` apart through a 40 ms window, with fake timers; what came out. */
  async function steady(count: number, everyMs: number, pauseAfter?: number) {
    vi.useFakeTimers();
    const stream = coalesceDeltas(40);
    const out: UIMessageChunk[] = [];
    const reader = stream.readable.getReader();
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        out.push(value);
      }
    })();
    const writer = stream.writable.getWriter();
    const set = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < count; i++) {
      await writer.write(text(`w${i} `));
      await vi.advanceTimersByTimeAsync(i === pauseAfter ? 1_000 : everyMs);
    }
    const timers = set.mock.calls.length;
    set.mockRestore();
    await writer.write({ type: "finish" });
    await writer.close();
    await reading;
    return { out, timers };
  }

  it("sends one chunk a window, the text whole, with a timer every few windows, not one per window", async () => {
    // 60 tokens a second for a second: 60 deltas, about 25 windows of 40 ms.
    const { out, timers } = await steady(60, 17);
    const deltas = out.filter((chunk) => chunk.type === "text-delta");
    expect(deltas.map((chunk) => chunk.delta).join("")).toBe(
      Array.from({ length: 60 }, (_, i) => `w${i} `).join(""),
    );
    expect(deltas.length).toBeGreaterThanOrEqual(20);
    expect(deltas.length).toBeLessThanOrEqual(32);
    // A timer per window would be about 25.
    expect(timers).toBeLessThanOrEqual(1_000 / (40 * PAUSE_WINDOWS) + 2);
  });

  it("sends what waits before a pause at most a few windows after it began", async () => {
    vi.useFakeTimers();
    const stream = coalesceDeltas(40);
    const out: UIMessageChunk[] = [];
    const reader = stream.readable.getReader();
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        out.push(value);
      }
    })();
    const writer = stream.writable.getWriter();
    await writer.write(text("first"));
    await writer.write(text(" held"));
    // The model pauses: " held" goes out by the pause bound, not with the next chunk.
    await vi.advanceTimersByTimeAsync(40 * PAUSE_WINDOWS - 1);
    expect(out.map((chunk) => (chunk.type === "text-delta" ? chunk.delta : chunk.type))).toEqual([
      "first",
    ]);
    await vi.advanceTimersByTimeAsync(2);
    expect(out.map((chunk) => (chunk.type === "text-delta" ? chunk.delta : chunk.type))).toEqual([
      "first",
      " held",
    ]);
    await writer.close();
    await reading;
  });
});

describe("stagedStream: coalescing and the reply's end in one stream stage", () => {
  it("gives what the two stages piped one after the other gave, a pause's flush included", async () => {
    const script: (UIMessageChunk | number)[] = [
      { type: "start" },
      { type: "start-step" },
      { type: "text-start", id: "t1" },
      text("a"),
      text("b"),
      text("c"),
      // A pause: what waits goes out from the coalescer's timer, through the second stage.
      40 * PAUSE_WINDOWS + 30,
      text("d"),
      { type: "text-end", id: "t1" },
      { type: "finish-step" },
      // A refused call: its empty step is left out.
      { type: "start-step" },
      { type: "finish-step" },
      { type: "finish" },
    ];
    const metadata = () => ({ priceMicros: 7 });
    const collect = async (stream: TransformStream<UIMessageChunk, UIMessageChunk>) => {
      const out: UIMessageChunk[] = [];
      const reading = (async () => {
        for await (const chunk of stream.readable) out.push(chunk);
      })();
      const writer = stream.writable.getWriter();
      for (const step of script) {
        if (typeof step === "number") await new Promise((r) => setTimeout(r, step));
        else await writer.write(step);
      }
      await writer.close();
      await reading;
      return out;
    };
    const two = coalesceDeltas(40);
    const piped = {
      writable: two.writable,
      readable: two.readable.pipeThrough(endOfReply(metadata)),
    } as TransformStream<UIMessageChunk, UIMessageChunk>;
    const one = stagedStream(
      (emit) => deltaCoalescer(40, emit),
      (emit) => endOfReplyStage(metadata, emit),
    );
    const [expected, got] = [await collect(piped), await collect(one)];
    expect(got).toEqual(expected);
    expect(got.map((chunk) => chunk.type)).toContain("message-metadata");
    expect(got.filter((chunk) => chunk.type === "start-step")).toHaveLength(1);
  });
});

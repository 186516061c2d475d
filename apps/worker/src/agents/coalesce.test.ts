import type { UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { coalesceDeltas } from "./coalesce.ts";

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

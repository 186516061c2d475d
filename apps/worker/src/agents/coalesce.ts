import type { UIMessageChunk } from "ai";

type Delta = Extract<UIMessageChunk, { type: "text-delta" | "reasoning-delta" }>;

const isDelta = (chunk: UIMessageChunk): chunk is Delta =>
  chunk.type === "text-delta" || chunk.type === "reasoning-delta";

/**
 * Merges the deltas of a streaming text or reasoning part that arrive within `windowMs` of each
 * other into one chunk. A model streams a token per chunk, and every chunk costs a WebSocket frame
 * per connection, a write to the resumable stream and the client's parse, so a reply of a few hundred
 * tokens is a few hundred of each. Merged, it is one per window: the text and its order are the same,
 * and a reader sees updates every `windowMs` at most.
 *
 * A part's first delta goes out at once (time to first token is untouched), and anything that is not
 * a delta (a tool call, an error, an abort, the finish) first flushes what is waiting, so nothing is
 * held back past the end of the part or the stream.
 *
 * While deltas flow, the next one closes the window (a delta that comes `windowMs` or more after
 * the waiting one began sends it). A timer only covers a pause: what waits goes out at most
 * `PAUSE_WINDOWS` windows after it began, and the one timer sleeps again rather than being set per
 * window (a runtime timer is not free on the turn's thread: `pnpm bench profile`).
 */
export const PAUSE_WINDOWS = 3;

export function coalesceDeltas(windowMs: number): TransformStream<UIMessageChunk, UIMessageChunk> {
  if (windowMs <= 0) return new TransformStream<UIMessageChunk, UIMessageChunk>();
  const pauseMs = windowMs * PAUSE_WINDOWS;
  let pending: Delta | null = null;
  let heldSince = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = new Set<string>();
  let out: TransformStreamDefaultController<UIMessageChunk> | null = null;

  const flush = () => {
    const waiting = pending;
    pending = null;
    try {
      if (waiting && out) out.enqueue(waiting);
    } catch {
      // The reader went away (the turn was cut): there is no one left to send it to.
    }
  };
  const onTimer = () => {
    timer = undefined;
    if (!pending) return;
    const left = heldSince + pauseMs - Date.now();
    if (left > 0) timer = setTimeout(onTimer, left);
    else flush();
  };
  const hold = (chunk: Delta) => {
    pending = chunk;
    heldSince = Date.now();
    if (timer === undefined) timer = setTimeout(onTimer, pauseMs);
  };
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  return new TransformStream<UIMessageChunk, UIMessageChunk>({
    start(controller) {
      out = controller;
    },
    transform(chunk, controller) {
      if (!isDelta(chunk)) {
        flush();
        controller.enqueue(chunk);
        return;
      }
      const part = `${chunk.type}:${chunk.id}`;
      if (!started.has(part)) {
        flush();
        started.add(part);
        controller.enqueue(chunk);
        return;
      }
      if (pending && pending.type === chunk.type && pending.id === chunk.id) {
        if (Date.now() - heldSince < windowMs) {
          pending = { ...pending, delta: pending.delta + chunk.delta };
          return;
        }
      }
      flush();
      hold(chunk);
    },
    flush() {
      stop();
      flush();
      out = null;
    },
    cancel() {
      stop();
      pending = null;
      out = null;
    },
  });
}

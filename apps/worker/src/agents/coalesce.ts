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

/** A chunk handler: where a stage sends what it lets through. */
export type ChunkSink = (chunk: UIMessageChunk) => void;

/** A stage of the reply's stream as plain calls, so several run in one `TransformStream`. */
export interface ChunkStage {
  push(chunk: UIMessageChunk): void;
  /** The stream ended: what is held goes out. */
  end(): void;
  /** The stream was cut: nothing more goes out. */
  cancel(): void;
}

/** `coalesceDeltas` as a stage sending to `emit` (a pause's flush sends from a timer). */
export function deltaCoalescer(windowMs: number, emit: ChunkSink): ChunkStage {
  if (windowMs <= 0) return { push: emit, end: () => {}, cancel: () => {} };
  const pauseMs = windowMs * PAUSE_WINDOWS;
  let pending: Delta | null = null;
  let heldSince = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const started = new Set<string>();
  let open = true;

  const flush = () => {
    const waiting = pending;
    pending = null;
    if (waiting && open) emit(waiting);
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

  return {
    push(chunk) {
      if (!isDelta(chunk)) {
        flush();
        emit(chunk);
        return;
      }
      const part = `${chunk.type}:${chunk.id}`;
      if (!started.has(part)) {
        flush();
        started.add(part);
        emit(chunk);
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
    end() {
      stop();
      flush();
      open = false;
    },
    cancel() {
      stop();
      pending = null;
      open = false;
    },
  };
}

/**
 * Stages run one after the other in a single `TransformStream`: one stream stage per chunk instead
 * of one per stage (each costs the runtime an enqueue, a read and their promises per chunk:
 * `pnpm bench profile-load`). `stages` are made with the sink each sends to, the last one's the
 * stream's output; what a stage sends after the stream was cut is dropped.
 */
export function stagedStream(
  ...stages: ((emit: ChunkSink) => ChunkStage)[]
): TransformStream<UIMessageChunk, UIMessageChunk> {
  let out: TransformStreamDefaultController<UIMessageChunk> | null = null;
  const sink: ChunkSink = (chunk) => {
    try {
      out?.enqueue(chunk);
    } catch {
      // The reader went away (the turn was cut): there is no one left to send it to.
    }
  };
  const made: ChunkStage[] = [];
  let emit = sink;
  for (const make of [...stages].reverse()) {
    const stage = make(emit);
    made.unshift(stage);
    emit = stage.push;
  }
  const first = made[0];
  return new TransformStream<UIMessageChunk, UIMessageChunk>({
    start(controller) {
      out = controller;
    },
    transform(chunk) {
      if (first) first.push(chunk);
      else sink(chunk);
    },
    flush() {
      for (const stage of made) stage.end();
      out = null;
    },
    cancel() {
      for (const stage of made) stage.cancel();
      out = null;
    },
  });
}

export function coalesceDeltas(windowMs: number): TransformStream<UIMessageChunk, UIMessageChunk> {
  if (windowMs <= 0) return new TransformStream<UIMessageChunk, UIMessageChunk>();
  return stagedStream((emit) => deltaCoalescer(windowMs, emit));
}

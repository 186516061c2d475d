import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import {
  applyMarkup,
  type PricedStep,
  type PriceTable,
  priceCutCall,
  type StepPrices,
} from "@parley/billing";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type CallLedger, type CallRefusal, MeteringMiddleware } from "./metering-middleware.ts";
import type { Reservation, Settled, StepRequest } from "./turn-metering.ts";

/**
 * The metering middleware against a ledger that keeps its rows in memory with the same claim rule
 * as `TurnMetering` (a call is settled by whoever moves its row out of `reserved`/`called` first),
 * driven by the AI SDK's own `streamText`/`generateText` over `MockLanguageModelV4`: finish, error,
 * abort, cancel, stall, a tool loop, a refusal, and paths racing to settle one call twice.
 */

const table: PriceTable = {
  models: {
    "test/model": {
      promptMicrosPerMTok: 1_000_000,
      completionMicrosPerMTok: 2_000_000,
      cachedPromptMicrosPerMTok: null,
      reasoningMicrosPerMTok: null,
    },
  },
  default: {
    promptMicrosPerMTok: 1_000_000,
    completionMicrosPerMTok: 2_000_000,
    cachedPromptMicrosPerMTok: null,
    reasoningMicrosPerMTok: null,
  },
};
const prices: StepPrices = { table, model: "test/model", markupBps: 2_000 };
const MAX_OUTPUT = 64;

type Row = { status: "reserved" | "called" | "settled" | "released"; generationId: string | null };

class MemoryLedger implements CallLedger {
  readonly rows = new Map<string, Row>();
  /** Every ledger operation, in order. */
  readonly events: string[] = [];
  readonly requests: StepRequest[] = [];
  /** What was settled, by which path. */
  readonly settled: { holdId: string; path: "reported" | "cut"; priced: PricedStep }[] = [];
  refuse: (holdId: string) => CallRefusal | null = () => null;
  /** Usage landing on the account a moment after the settle (a hold's settle RPC), noted when it does. */
  slowLanding = false;
  /** The provider's record of a generation (dollars), as OpenRouter's `/generation` answers. */
  lookup: (generationId: string) => Promise<number | null> = async () => 0.0002;

  async reserve(step: StepRequest): Promise<Reservation> {
    this.events.push(`reserve ${step.holdId}`);
    this.requests.push(step);
    const refused = this.refuse(step.holdId);
    if (refused)
      return { holdId: step.holdId, result: refused, promptEstimate: step.promptEstimate };
    this.rows.set(step.holdId, { status: "reserved", generationId: null });
    return { holdId: step.holdId, result: { ok: true }, promptEstimate: step.promptEstimate };
  }

  noteCall(holdId: string, generationId: string | null): void {
    this.events.push(`call ${holdId} ${generationId}`);
    const row = this.rows.get(holdId);
    if (row) Object.assign(row, { status: "called", generationId });
  }

  #claim(holdId: string): boolean {
    const row = this.rows.get(holdId);
    if (!row || (row.status !== "reserved" && row.status !== "called")) return false;
    row.status = "settled";
    return true;
  }

  settle(holdId: string, priced: PricedStep) {
    if (!this.#claim(holdId)) return null;
    this.events.push(`settle ${holdId}`);
    this.settled.push({ holdId, path: "reported", priced });
    return {
      settled: { tokens: priced.tokens, priceMicros: priced.priceMicros, steps: 1 },
      landed: this.slowLanding
        ? new Promise<void>((resolve) =>
            setTimeout(() => {
              this.events.push(`landed ${holdId}`);
              resolve();
            }, 10),
          )
        : Promise.resolve(),
    };
  }

  async closeCall(holdId: string, streamedChars: number, callPrices: StepPrices) {
    const row = this.rows.get(holdId);
    if (row?.status === "reserved") {
      row.status = "released";
      this.events.push(`release ${holdId}`);
      return null;
    }
    if (row?.status !== "called") return null;
    const lookedUpDollars = row.generationId ? await this.lookup(row.generationId) : null;
    const priced = priceCutCall({ promptEstimate: 10, streamedChars, lookedUpDollars }, callPrices);
    if (!this.#claim(holdId)) return null;
    this.events.push(`close ${holdId} ${streamedChars}`);
    this.settled.push({ holdId, path: "cut", priced });
    return { tokens: priced.tokens, priceMicros: priced.priceMicros, steps: 1 } satisfies Settled;
  }

  async closeOpen(callPrices: StepPrices, turnId?: string) {
    const closed: Settled[] = [];
    for (const [holdId, row] of this.rows) {
      if (turnId && !holdId.startsWith(`${turnId}:`)) continue;
      if (row.status !== "reserved" && row.status !== "called") continue;
      const one = await this.closeCall(holdId, 0, callPrices);
      if (one) closed.push(one);
    }
    return closed;
  }

  track<T>(work: Promise<T>): Promise<T> {
    return work;
  }
}

const meterOf = (ledger: MemoryLedger) =>
  new MeteringMiddleware({
    ledger,
    turnId: "turn-1",
    payer: {
      billable: false,
      orgId: "org-1",
      attribution: { memberId: "m", projectId: null, sessionId: null },
    },
    prices,
    maxOutputTokens: MAX_OUTPUT,
  });

const usage = (input: number, output: number): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const noUsage: LanguageModelV4Usage = {
  inputTokens: {
    total: undefined,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};
const cost = (dollars: number) => ({ openrouter: { usage: { cost: dollars } } });

const text = (...deltas: string[]): LanguageModelV4StreamPart[] => [
  { type: "text-start", id: "t" },
  ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t", delta })),
  { type: "text-end", id: "t" },
];

/**
 * A provider's stream of `parts`; with `hang`, it then sends nothing more (a model that stalls, or
 * one still writing when the turn is stopped) until it is cancelled.
 */
function providerStream(parts: LanguageModelV4StreamPart[], hang = false) {
  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] });
      for (const part of parts) controller.enqueue(part);
      if (!hang) controller.close();
    },
  });
}

let generations = 0;
/** A mock model answering each call with the next of `answers`, each under its own generation id. */
function modelAnswering(
  ...answers: ((call: LanguageModelV4CallOptions) => ReadableStream<LanguageModelV4StreamPart>)[]
) {
  const model = new MockLanguageModelV4({
    doStream: async (call) => {
      const answer = answers[model.doStreamCalls.length - 1];
      if (!answer) throw new Error("no more answers");
      return {
        stream: answer(call),
        response: { headers: { "x-generation-id": `gen-${++generations}` } },
      };
    },
  });
  return model;
}

const finished = (
  parts: LanguageModelV4StreamPart[],
  input = 100,
  output = 20,
  dollars = 0.00015,
) =>
  providerStream([
    ...parts,
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: usage(input, output),
      providerMetadata: cost(dollars),
    },
  ]);

describe("the metering middleware", () => {
  it("reserves a call before the provider is asked, and settles it once from its reported cost", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    let seenAtCall: string[] = [];
    const model = modelAnswering(() => {
      seenAtCall = [...ledger.events];
      return finished(text("Hello", " there"));
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      maxOutputTokens: 10_000,
    });
    expect(await result.text).toBe("Hello there");
    expect(seenAtCall).toEqual(["reserve turn-1:0"]);
    // The call went out with at most the output it was held for, and was held for exactly that.
    expect(model.doStreamCalls[0]?.maxOutputTokens).toBe(MAX_OUTPUT);
    expect(ledger.requests[0]?.maxOutputTokens).toBe(MAX_OUTPUT);
    expect(ledger.events).toEqual([
      "reserve turn-1:0",
      `call turn-1:0 gen-${generations}`,
      "settle turn-1:0",
    ]);
    expect(ledger.settled).toHaveLength(1);
    expect(ledger.settled[0]?.priced).toMatchObject({
      costMicros: 150,
      priceMicros: applyMarkup(150, 2_000),
      source: "provider",
    });
    // The reply's cost is what was settled, to the micro-dollar.
    expect(meter.totals).toEqual({
      steps: 1,
      priceMicros: applyMarkup(150, 2_000),
      tokens: {
        promptTokens: 100,
        completionTokens: 20,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
    });
    // Nothing is left for the turn's end to close: settling again finds nothing.
    expect(await meter.settled()).toEqual(meter.totals);
    expect(ledger.settled).toHaveLength(1);
  });

  it("closes a call that errors mid-stream once, from the provider's record, ignoring the finish that follows", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    // OpenRouter's provider sends an `error` part, then a `finish`.
    const model = modelAnswering(() =>
      providerStream([
        ...text("abcd", "efgh", "ijkl").slice(0, 4),
        { type: "error", error: new Error("upstream failed") },
        // Whatever usage came before the error is partial: the provider's record is what it charged.
        { type: "finish", finishReason: { unified: "error", raw: "error" }, usage: usage(100, 1) },
      ]),
    );
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      onError: () => {},
    });
    await result.consumeStream();
    expect(ledger.events.filter((e) => !e.startsWith("reserve") && !e.startsWith("call"))).toEqual([
      "close turn-1:0 12",
    ]);
    expect(ledger.settled).toEqual([
      expect.objectContaining({
        holdId: "turn-1:0",
        path: "cut",
        priced: expect.objectContaining({ costMicros: 200, source: "provider" }),
      }),
    ]);
    expect(meter.totals.priceMicros).toBe(applyMarkup(200, 2_000));
  });

  it("prices a finish that reports nothing as a cut call, never as free (the estimate when there is no record)", async () => {
    const ledger = new MemoryLedger();
    ledger.lookup = async () => null;
    const meter = meterOf(ledger);
    const model = modelAnswering(() =>
      providerStream([
        ...text("12345678"),
        { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: noUsage },
      ]),
    );
    await streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
    }).consumeStream();
    expect(ledger.settled).toHaveLength(1);
    expect(ledger.settled[0]?.priced).toMatchObject({
      source: "table",
      tokens: { completionTokens: 2 },
    });
    expect(meter.totals.priceMicros).toBeGreaterThan(0);
  });

  it("closes a call whose stream ends without a finish (a dropped connection) once", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    const model = modelAnswering(() => providerStream(text("abcdefgh")));
    await streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      onError: () => {},
    }).consumeStream();
    expect(ledger.events.filter((e) => e.startsWith("close"))).toEqual(["close turn-1:0 8"]);
    expect(ledger.settled).toHaveLength(1);
    expect(meter.totals.steps).toBe(1);
  });

  it("closes a call once when the turn is aborted mid-stream, though its stream never ends", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    const stop = new AbortController();
    const model = modelAnswering(() => providerStream(text("one", "two").slice(0, 3), true));
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      abortSignal: stop.signal,
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        stop.abort();
        break;
      }
    }
    const settled = await meter.settled();
    expect(ledger.settled.map((s) => [s.holdId, s.path])).toEqual([["turn-1:0", "cut"]]);
    expect(ledger.events.filter((e) => e.startsWith("close"))).toEqual(["close turn-1:0 6"]);
    expect(settled).toMatchObject({ steps: 1, priceMicros: applyMarkup(200, 2_000) });
  });

  it("closes a call once when its stream is cancelled", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    let cancelled = false;
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({ type: "text-start", id: "t" });
            controller.enqueue({ type: "text-delta", id: "t", delta: "abc" });
          },
          cancel() {
            cancelled = true;
          },
        }),
        response: { headers: { "x-generation-id": "gen-cancel" } },
      }),
    });
    const wrapped = wrapLanguageModel({ model, middleware: meter });
    const { stream } = await wrapped.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    const reader = stream.getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    await reader.cancel("gone");
    await meter.settled();
    expect(cancelled).toBe(true);
    expect(ledger.events.filter((e) => e.startsWith("close"))).toEqual(["close turn-1:0 3"]);
    expect(ledger.settled).toHaveLength(1);
  });

  it("cuts a call that stalls, and closes it once", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    const turn = new AbortController();
    const stalls: number[] = [];
    meter.watchStalls(30, () => {
      stalls.push(Date.now());
      turn.abort("model stalled");
    });
    const model = modelAnswering(() => providerStream(text("slow").slice(0, 2), true));
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      abortSignal: turn.signal,
    });
    await result.consumeStream({ onError: () => {} });
    await meter.settled();
    expect(stalls).toHaveLength(1);
    expect(ledger.settled.map((s) => s.path)).toEqual(["cut"]);
  });

  it("settles a call once when the finish arrives after the reset's close claimed it, and when a provider sends two finishes", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const model = modelAnswering(() => {
      const parts = text("late");
      let sent = false;
      return new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          if (sent) return;
          sent = true;
          controller.enqueue({ type: "stream-start", warnings: [] });
          for (const part of parts) controller.enqueue(part);
          await gate;
          const finish: LanguageModelV4StreamPart = {
            type: "finish",
            finishReason: { unified: "stop", raw: "stop" },
            usage: usage(100, 20),
            providerMetadata: cost(0.00015),
          };
          controller.enqueue(finish);
          controller.enqueue(finish);
          controller.close();
        },
      });
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
    });
    const consumed = result.consumeStream();
    await new Promise((r) => setTimeout(r, 20));
    // What a restart's `closeOpen` does to a call a reset left open: it claims it first.
    await ledger.closeOpen(prices);
    release();
    await consumed;
    expect(ledger.settled.map((s) => s.path)).toEqual(["cut"]);
    // The turn did not settle it, so its reply does not count it.
    expect(meter.totals.steps).toBe(0);

    const again = new MemoryLedger();
    const twice = meterOf(again);
    const doubled = modelAnswering(() => {
      const finish: LanguageModelV4StreamPart = {
        type: "finish",
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(100, 20),
        providerMetadata: cost(0.00015),
      };
      return providerStream([...text("x"), finish, finish]);
    });
    await streamText({
      model: wrapLanguageModel({ model: doubled, middleware: twice }),
      prompt: "hi",
    }).consumeStream();
    expect(again.settled).toHaveLength(1);
    expect(twice.totals.steps).toBe(1);
  });

  it("in a tool loop, reserves each call before it is made and settles each once, the prompt estimate growing", async () => {
    const ledger = new MemoryLedger();
    ledger.slowLanding = true;
    const meter = meterOf(ledger);
    const model = modelAnswering(
      () =>
        providerStream([
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: "{}" },
          {
            type: "finish",
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage: usage(100, 10),
            providerMetadata: cost(0.0001),
          },
        ]),
      () => finished(text("It is 42."), 180, 20, 0.0002),
    );
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "What is it?",
      tools: {
        lookup: tool({
          inputSchema: z.object({}),
          execute: async () => ({ answer: 42, padding: "x".repeat(400) }),
        }),
      },
      stopWhen: stepCountIs(5),
    });
    expect(await result.text).toBe("It is 42.");
    await meter.settled();
    expect(ledger.events.map((e) => e.replace(/gen-\d+/, "gen"))).toEqual([
      "reserve turn-1:0",
      "call turn-1:0 gen",
      "settle turn-1:0",
      // The next call is reserved once the last one's usage landed: the hold it frees counts.
      "landed turn-1:0",
      "reserve turn-1:1",
      "call turn-1:1 gen",
      "settle turn-1:1",
      "landed turn-1:1",
    ]);
    const [first, second] = ledger.requests;
    // The second call's prompt carries the first's reply and the tool's result (400+ characters).
    expect((second?.promptEstimate ?? 0) - (first?.promptEstimate ?? 0)).toBeGreaterThan(100);
    expect(meter.totals).toMatchObject({
      steps: 2,
      priceMicros: applyMarkup(100, 2_000) + applyMarkup(200, 2_000),
    });
  });

  it("makes no call it cannot reserve: the loop stops there and says why", async () => {
    const ledger = new MemoryLedger();
    ledger.refuse = (holdId) =>
      holdId === "turn-1:1"
        ? ({
            ok: false,
            reason: "insufficient_credits",
            availableMicros: 0,
            requiredMicros: 10,
            alerts: [],
          } satisfies CallRefusal)
        : null;
    const meter = meterOf(ledger);
    const model = modelAnswering(
      () =>
        providerStream([
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: "{}" },
          {
            type: "finish",
            finishReason: { unified: "tool-calls", raw: "tool_calls" },
            usage: usage(100, 10),
            providerMetadata: cost(0.0001),
          },
        ]),
      () => finished(text("never")),
    );
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "What is it?",
      tools: { lookup: tool({ inputSchema: z.object({}), execute: async () => ({ answer: 42 }) }) },
      stopWhen: stepCountIs(5),
    });
    await result.consumeStream();
    expect(model.doStreamCalls).toHaveLength(1);
    expect(meter.refusal?.reason).toBe("insufficient_credits");
    expect(meter.totals.steps).toBe(1);
    expect(await result.text).toBe("");
    expect(ledger.settled.map((s) => s.holdId)).toEqual(["turn-1:0"]);
  });

  it("uses the first call's reservation made at admission, and one made again for a larger prompt", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    expect(await meter.admit(500)).toEqual({ ok: true });
    await meter.readmit(900);
    expect(ledger.events).toEqual(["reserve turn-1:0", "release turn-1:0", "reserve turn-1:0r"]);
    const model = modelAnswering(() => finished(text("ok")));
    await streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
    }).consumeStream();
    expect(ledger.requests.map((r) => [r.holdId, r.promptEstimate])).toEqual([
      ["turn-1:0", 500],
      ["turn-1:0r", 900],
    ]);
    expect(ledger.settled.map((s) => s.holdId)).toEqual(["turn-1:0r"]);
  });

  it("meters generateText's calls the same way", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(100, 20),
        providerMetadata: cost(0.00015),
        warnings: [],
        response: { headers: { "x-generation-id": "gen-generate" } },
      }),
    });
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
    });
    expect(result.text).toBe("done");
    expect(ledger.events).toEqual([
      "reserve turn-1:0",
      "call turn-1:0 gen-generate",
      "settle turn-1:0",
    ]);

    const refusing = new MemoryLedger();
    refusing.refuse = () =>
      ({
        ok: false,
        reason: "spend_limit",
        limit: "org_monthly",
        limitMicros: 0,
        committedMicros: 0,
        requiredMicros: 10,
        alerts: [],
      }) satisfies CallRefusal;
    const refused = meterOf(refusing);
    const never = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error("called");
      },
    });
    await generateText({
      model: wrapLanguageModel({ model: never, middleware: refused }),
      prompt: "hi",
    });
    expect(never.doGenerateCalls).toHaveLength(0);
    expect(refused.refusal?.reason).toBe("spend_limit");
  });

  it("releases a call the provider refused before streaming (nothing generated, nothing charged)", async () => {
    const ledger = new MemoryLedger();
    const meter = meterOf(ledger);
    const model = new MockLanguageModelV4({
      doStream: async () => {
        throw new Error("429 Too Many Requests");
      },
    });
    await streamText({
      model: wrapLanguageModel({ model, middleware: meter }),
      prompt: "hi",
      onError: () => {},
    }).consumeStream();
    expect(ledger.events).toEqual(["reserve turn-1:0", "release turn-1:0"]);
    expect(ledger.settled).toEqual([]);
  });
});

describe("where a turn's money is handled", () => {
  it("nowhere in the agents but the middleware and the ledger: no module reserves, prices or settles a call itself", () => {
    const dir = import.meta.dirname;
    const allowed = new Set([
      "metering-middleware.ts",
      "turn-metering.ts",
      "pending-usage.ts",
      "session-lease.ts",
    ]);
    const money =
      /\.(reserve|settle|closeCall|noteCall)\(|\bprice(Step|CutCall)\(|\bmaxCallCostMicros\(/;
    const offenders = readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter(
        (file) =>
          file.endsWith(".ts") && !file.endsWith(".test.ts") && !allowed.has(path.basename(file)),
      )
      .filter((file) => money.test(readFileSync(path.join(dir, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});

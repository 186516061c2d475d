/**
 * A turn's metering as one language-model middleware (the AI SDK's `wrapLanguageModel`): every
 * provider call the turn makes, whatever makes it (a step of a tool loop, a retry, a
 * `generateText`), is reserved before it goes out and settled exactly once after it, here and
 * nowhere else. docs/2026-12-01-metering-leases.md, "One middleware".
 */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
  SharedV4Headers,
  SharedV4ProviderMetadata,
} from "@ai-sdk/provider";
import {
  addTokens,
  noTokens,
  priceStep,
  reportedCostDollars,
  type StepPrices,
} from "@parley/billing";
import { estimateTokens } from "./context.ts";
import type { CallRefusal } from "./provider-parts.ts";
import { refusedGeneration, refusedStream, stepUsage } from "./provider-parts.ts";
import { StallGuard } from "./reply-endings.ts";
import type {
  Payer,
  Reservation,
  Settled,
  SettledCall,
  StepAdmission,
  StepRequest,
} from "./turn-metering.ts";

/** What the middleware needs from the agent's metering: `TurnMetering` (turn-metering.ts). */
export interface CallLedger {
  reserve(step: StepRequest): Promise<Reservation>;
  noteCall(holdId: string, generationId: string | null): void;
  settle(
    holdId: string,
    priced: ReturnType<typeof priceStep>,
    generationId: string | null,
    model: string,
  ): SettledCall | null;
  closeCall(holdId: string, streamedChars: number, prices: StepPrices): Promise<Settled | null>;
  closeOpen(prices: StepPrices, turnId?: string): Promise<Settled[]>;
  track<T>(work: Promise<T>): Promise<T>;
}

export type { CallRefusal } from "./provider-parts.ts";

export interface MeteringOptions {
  ledger: CallLedger;
  /** The server's id of the turn: each call is `<turnId>:<n>` in the ledger. */
  turnId: string;
  payer: Payer;
  /** The model's prices and the org's markup (the hold's size, and the table when no cost is reported). */
  prices: StepPrices;
  /** The most a call may write: every call is made with at most this, and held for it. */
  maxOutputTokens: number;
  /** Tokens the tool definitions add to a prompt (sent with each call, not in its messages). */
  toolPromptTokens?: number;
  /**
   * Whether the model's provider keeps generation records the platform can look up (OpenRouter,
   * default true). An OpenAI-compatible endpoint has none: a generation id it sends is not noted,
   * so a cut call is never priced by another endpoint's record of some other generation.
   */
  generationLookup?: boolean;
}

/** One provider call, from its reservation to its settlement. */
interface Call {
  readonly holdId: string;
  /** Text and reasoning characters streamed: the estimate of a call cut before its usage. */
  streamed: number;
  generationId: string | null;
  /** Settled, or being closed: nothing else may settle it. */
  ended: boolean;
  /** Its closing, when it was cut (awaited by whoever meets the cut again). */
  closing: Promise<void> | null;
  stall: StallGuard | null;
  /** Stops watching the call (the abort listener, the stall timer). */
  unwatch: () => void;
}

const RESOLVED: Promise<void> = Promise.resolve();
const nothing = () => undefined;

/**
 * The metering of one turn, made per turn: its id, how many calls it made, what was settled for it
 * (the reply's cost shows exactly that), and whether a call was refused. Use it as the middleware
 * of the turn's model: `wrapLanguageModel({ model, middleware: meter })`.
 *
 * For each call, before the provider is asked: a reservation sized from the prompt as the model
 * will see it and `maxOutputTokens` at the model's prices (the first call's may be made early, at
 * admission: `admit`); a call that cannot be reserved is not made (`refusal`). After it, exactly
 * once: its reported usage and cost priced by `priceStep` when the stream finishes with them, else
 * (an error, an abort, a stall, a cancelled stream, a finish that reports nothing) the provider's
 * record of the generation or the estimate, through `TurnMetering.closeCall`. A reset mid-call
 * leaves the call's row `called`, closed on start (`closeOpen`).
 */
export class MeteringMiddleware implements LanguageModelV4Middleware {
  readonly specificationVersion = "v4";
  readonly #ledger: CallLedger;
  readonly #turnId: string;
  readonly #payer: Payer;
  readonly #prices: StepPrices;
  readonly #maxOutputTokens: number;
  readonly #toolPromptTokens: number;
  readonly #generationLookup: boolean;
  #stall: { timeoutMs: number; onStall: () => void } | null = null;
  /** Calls begun (made or refused). */
  #calls = 0;
  /** The first call's reservation, when made at admission. */
  #first: { holdId: string; promptEstimate: number; admission: Promise<StepAdmission> } | null =
    null;
  /** The last call's prompt: how many messages, and their estimate (the next one adds to it). */
  #prompt = { messages: 0, estimate: 0 };
  #refusal: CallRefusal | null = null;
  #totals: Settled = { tokens: noTokens(), priceMicros: 0, steps: 0 };
  /** The last settlement: the next call is reserved after it (the hold it frees counts). */
  #lastSettled: Promise<unknown> = RESOLVED;
  /** Settlements still running. */
  readonly #pending = new Set<Promise<unknown>>();

  constructor(options: MeteringOptions) {
    this.#ledger = options.ledger;
    this.#turnId = options.turnId;
    this.#payer = options.payer;
    this.#prices = options.prices;
    this.#maxOutputTokens = options.maxOutputTokens;
    this.#toolPromptTokens = options.toolPromptTokens ?? 0;
    this.#generationLookup = options.generationLookup ?? true;
  }

  /** What was settled for the turn so far: the reply's cost, call by call as each was settled. */
  get totals(): Settled {
    return { ...this.#totals, tokens: { ...this.#totals.tokens } };
  }

  /** The first call's reservation made at admission, if one was: null otherwise. */
  get firstAdmission(): Promise<StepAdmission> | null {
    return this.#first?.admission ?? null;
  }

  /** Why a call of this turn was not made, if one was refused (the turn stops there). */
  get refusal(): CallRefusal | null {
    return this.#refusal;
  }

  /** Cuts a call that sends nothing for `timeoutMs` (each call is watched while it streams). */
  watchStalls(timeoutMs: number, onStall: () => void): void {
    this.#stall = { timeoutMs, onStall };
  }

  /**
   * Reserves the turn's first call now, for a prompt of `promptEstimate` tokens, so the hold is
   * made while the turn is admitted rather than on the first token's path; the first call then
   * uses it. Asking again returns the same admission.
   */
  admit(promptEstimate: number): Promise<StepAdmission> {
    if (this.#first) return this.#first.admission;
    return this.#admitAs(`${this.#turnId}:0`, promptEstimate);
  }

  /**
   * Gives the first call's reservation back and starts it again, for a larger prompt (resolves
   * once the old one is given back; `admit` then returns the new one).
   */
  async readmit(promptEstimate: number): Promise<void> {
    await this.abandon();
    // Under an id of its own: a hold id is never reused, even once released.
    this.#admitAs(`${this.#turnId}:0r`, promptEstimate);
  }

  /** Gives back what the turn reserved and did not use (it was not admitted after all). */
  async abandon(): Promise<void> {
    const first = this.#first;
    this.#first = null;
    if (first && (await first.admission.catch(() => null))?.ok) {
      await this.#ledger.closeOpen(this.#prices, this.#turnId);
    }
  }

  #admitAs(holdId: string, promptEstimate: number): Promise<StepAdmission> {
    const admission = this.#reserve(holdId, promptEstimate, this.#maxOutputTokens);
    // Awaited by the turn (or abandoned); a failure surfaces there, not as an unhandled rejection.
    admission.catch(nothing);
    this.#first = { holdId, promptEstimate, admission };
    return admission;
  }

  async #reserve(
    holdId: string,
    promptEstimate: number,
    maxOutputTokens: number,
  ): Promise<StepAdmission> {
    const { result } = await this.#ledger.reserve({
      ...this.#payer,
      holdId,
      promptEstimate,
      maxOutputTokens,
      prices: this.#prices,
    });
    return result;
  }

  /**
   * Waits for every settlement of the turn, closes whatever of it is still open (a call whose
   * stream nobody read to its end), and returns what the turn was settled to: the cost of a reply
   * that was stopped or failed.
   */
  async settled(): Promise<Settled> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    const rest = await this.#ledger.closeOpen(this.#prices, this.#turnId).catch(() => []);
    for (const one of rest) this.#count(one);
    return this.totals;
  }

  // ---- the middleware ----

  /** Every call is made with at most the output its reservation was sized for. */
  transformParams = async ({
    params,
  }: {
    params: LanguageModelV4CallOptions;
  }): Promise<LanguageModelV4CallOptions> =>
    params.maxOutputTokens !== undefined && params.maxOutputTokens <= this.#maxOutputTokens
      ? params
      : { ...params, maxOutputTokens: this.#maxOutputTokens };

  wrapStream = async ({
    doStream,
    params,
  }: {
    doStream: () => PromiseLike<LanguageModelV4StreamResult>;
    params: LanguageModelV4CallOptions;
  }): Promise<LanguageModelV4StreamResult> => {
    const call = await this.#open(params);
    if (!call) return refusedStream(this.#refusal);
    let result: LanguageModelV4StreamResult;
    try {
      result = await doStream();
    } catch (error) {
      // It never streamed (refused by the provider, aborted before its answer): released.
      await this.#cut(call);
      throw error;
    }
    this.#called(call, result.response?.headers);
    return { ...result, stream: result.stream.pipeThrough(this.#watch(call, params.abortSignal)) };
  };

  wrapGenerate = async ({
    doGenerate,
    params,
  }: {
    doGenerate: () => PromiseLike<LanguageModelV4GenerateResult>;
    params: LanguageModelV4CallOptions;
  }): Promise<LanguageModelV4GenerateResult> => {
    const call = await this.#open(params);
    if (!call) return refusedGeneration(this.#refusal);
    let result: LanguageModelV4GenerateResult;
    try {
      result = await doGenerate();
    } catch (error) {
      await this.#cut(call);
      throw error;
    }
    this.#called(call, result.response?.headers);
    await this.#finish(call, result.usage, result.providerMetadata);
    return result;
  };

  /** Reserves the next call (or takes the first's, made at admission); null when refused. */
  async #open(params: LanguageModelV4CallOptions): Promise<Call | null> {
    const index = this.#calls++;
    const first = index === 0 ? this.#first : null;
    let holdId: string;
    let promptEstimate: number;
    let admission: StepAdmission;
    if (first) {
      ({ holdId, promptEstimate } = first);
      admission = await first.admission;
    } else {
      holdId = `${this.#turnId}:${index}`;
      promptEstimate = this.#estimate(params.prompt);
      await this.#lastSettled;
      admission = await this.#reserve(
        holdId,
        promptEstimate,
        params.maxOutputTokens ?? this.#maxOutputTokens,
      );
    }
    this.#prompt = { messages: params.prompt.length, estimate: promptEstimate };
    if (!admission.ok) {
      this.#refusal ??= admission;
      return null;
    }
    const stall = this.#stall;
    return {
      holdId,
      streamed: 0,
      generationId: null,
      ended: false,
      closing: null,
      stall: stall ? new StallGuard(stall.timeoutMs, stall.onStall) : null,
      unwatch: nothing,
    };
  }

  /**
   * The prompt of a call, in tokens: the last call's plus what was added since (its reply, the
   * tools' results), so a tool loop's prompt is not serialized whole at every step.
   */
  #estimate(prompt: LanguageModelV4CallOptions["prompt"]): number {
    const last = this.#prompt;
    if (last.messages > 0 && prompt.length >= last.messages) {
      return last.estimate + estimateTokens(JSON.stringify(prompt.slice(last.messages)));
    }
    return estimateTokens(JSON.stringify(prompt)) + this.#toolPromptTokens;
  }

  /** The call went out: its generation id (OpenRouter's `X-Generation-Id`), for a later lookup. */
  #called(call: Call, headers: SharedV4Headers | undefined): void {
    call.generationId = this.#generationLookup ? (headers?.["x-generation-id"] ?? null) : null;
    this.#ledger.noteCall(call.holdId, call.generationId);
  }

  /**
   * Watches a call's stream: what it streamed (no write per chunk), the stall clock, its `finish`
   * (settled from its usage), and every way it can end without one (an `error` part, the end of
   * the stream, a cancel, the turn's abort signal): closed through the ledger, once.
   */
  #watch(
    call: Call,
    signal: AbortSignal | undefined,
  ): TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart> {
    if (signal) {
      // The SDK stops reading a stream it aborts, and may never cancel it: the signal is the one
      // sure news of a stop or a stall.
      const onAbort = () => void this.#cut(call);
      signal.addEventListener("abort", onAbort, { once: true });
      call.unwatch = () => signal.removeEventListener("abort", onAbort);
      // Aborted between the provider's answer and now: no event will come.
      if (signal.aborted) onAbort();
    }
    let failed = false;
    return new TransformStream({
      transform: (part, controller) => {
        call.stall?.touch();
        if (part.type === "text-delta" || part.type === "reasoning-delta") {
          call.streamed += part.delta.length;
        } else if (part.type === "finish") {
          // Passed on once settled: the reply's cost is complete before its end is.
          return this.#finish(call, part.usage, part.providerMetadata).then(() =>
            controller.enqueue(part),
          );
        } else if (part.type === "error") {
          // The call is over (the SDK ends the step at an error): priced by the provider's record,
          // which may take seconds to appear. The failed reply does not wait for it: its cost
          // reaches the stored reply later (`settled`, through the agent's reply endings).
          failed = true;
          void this.#cut(call);
        }
        controller.enqueue(part);
      },
      // A stream that ends with no `finish` and no error is closed before the reply's end, so a
      // completed reply's cost counts it; after an error the closing is already under way.
      flush: () => (failed ? undefined : this.#cut(call)),
      cancel: () => void this.#cut(call),
    });
  }

  /** A call that finished: settled from its reported usage, or closed as cut if it reported none. */
  #finish(
    call: Call,
    usage: LanguageModelV4Usage,
    providerMetadata: SharedV4ProviderMetadata | undefined,
  ): Promise<void> {
    if (call.ended) return call.closing ?? RESOLVED;
    if (
      usage.inputTokens.total === undefined &&
      usage.outputTokens.total === undefined &&
      reportedCostDollars(providerMetadata) === null
    ) {
      // Nothing reported (a stream cut short still finishes): never priced as free.
      return this.#cut(call);
    }
    this.#end(call);
    const priced = priceStep(stepUsage(usage), providerMetadata, this.#prices);
    const done = this.#ledger.settle(call.holdId, priced, call.generationId, this.#prices.model);
    if (done) {
      this.#count(done.settled);
      this.#lastSettled = this.#track(done.landed);
    }
    return RESOLVED;
  }

  /**
   * A call that ended without its usage (or never went out): closed once, by the generation
   * lookup, else the estimate from its prompt and what it streamed; released if never made.
   */
  #cut(call: Call): Promise<void> {
    if (call.ended) return call.closing ?? RESOLVED;
    this.#end(call);
    call.closing = this.#track(
      this.#ledger.closeCall(call.holdId, call.streamed, this.#prices).then(
        (settled) => {
          if (settled) this.#count(settled);
        },
        // Left open: the turn's end or the next start closes it (`closeOpen`).
        nothing,
      ),
    );
    this.#lastSettled = call.closing;
    return call.closing;
  }

  #end(call: Call): void {
    call.ended = true;
    call.unwatch();
    call.stall?.done(nothing);
  }

  #count(settled: Settled): void {
    this.#totals.steps += settled.steps;
    this.#totals.priceMicros += settled.priceMicros;
    this.#totals.tokens = addTokens(this.#totals.tokens, settled.tokens);
  }

  /** Keeps a settlement in view until it ends (`settled`, and erasure through the ledger). */
  #track<T>(work: Promise<T>): Promise<T> {
    const tracked = this.#ledger.track(work);
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked)).catch(nothing);
    return tracked;
  }
}

import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import {
  addTokens,
  noTokens,
  priceCutCall,
  priceStep,
  type StepPrices,
  type StepUsage,
  type TokenUsage,
  usableDollars,
} from "@parley/billing";

/**
 * The model client: `@openrouter/ai-sdk-provider` against `MODEL_BASE_URL` (OpenRouter, the local
 * dev model, or any OpenAI-compatible server). The fetch is wrapped to note each call's generation id
 * from the `X-Generation-Id` header, so a turn aborted before its usage chunk can still be looked up.
 */
export function modelClient(env: Env, meter: { noteCall(generationId: string | null): void }) {
  const openrouter = createOpenRouter({
    apiKey: env.OPENROUTER_API_KEY || "dev",
    baseURL: env.MODEL_BASE_URL,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      // An HTTP error before streaming generated nothing and costs nothing.
      if (response.ok) meter.noteCall(response.headers.get("x-generation-id"));
      return response;
    },
  });
  return openrouter;
}

export interface MeteredTurn {
  costMicros: number;
  tokens: TokenUsage;
  generationIds: string[];
  /** How the cost was found: every step reported it, the generation lookup, or the price table. */
  source: "reported" | "lookup" | "estimate";
}

/**
 * Collects a turn's cost step by step. Steps of a turn run one after another, so the first N model
 * calls are the N finished steps; any call after them was cut off (abort, error, eviction). Policy
 * for such a call: ask the provider's generation endpoint what it charged; failing that, estimate from
 * the price table with the prompt estimate and the text streamed so far. Every call is priced by
 * `@parley/billing`'s `priceStep` or `priceCutCall`, the same as the assistant's steps.
 * Documented in docs/2026-11-29-agents.md.
 */
export class TurnMeter {
  readonly prices: StepPrices;
  readonly promptEstimate: number;
  #calls: (string | null)[] = [];
  #finished: { costMicros: number; tokens: TokenUsage }[] = [];
  #streamedChars = 0;

  constructor(prices: StepPrices, promptEstimate: number) {
    this.prices = prices;
    this.promptEstimate = promptEstimate;
  }

  get model(): string {
    return this.prices.model;
  }

  /** A model call went out; its generation id if the endpoint sent one. */
  noteCall(generationId: string | null): void {
    this.#calls.push(generationId);
  }

  noteStreamed(text: string): void {
    this.#streamedChars += text.length;
  }

  get calls(): number {
    return this.#calls.length;
  }

  /** Records a finished step, priced by the provider's reported cost or else the price table. */
  step(usage: StepUsage, providerMetadata: unknown): void {
    const { costMicros, tokens } = priceStep(usage, providerMetadata, this.prices);
    this.#finished.push({ costMicros, tokens });
    this.#streamedChars = 0;
  }

  /** The turn's total, with calls that never finished looked up or estimated. */
  async total(lookup: (generationId: string) => Promise<number | null>): Promise<MeteredTurn> {
    let costMicros = 0;
    let tokens = noTokens();
    for (const step of this.#finished) {
      costMicros += step.costMicros;
      tokens = addTokens(tokens, step.tokens);
    }
    let source: MeteredTurn["source"] = "reported";
    for (const generationId of this.#calls.slice(this.#finished.length)) {
      const lookedUpDollars = generationId ? await lookup(generationId).catch(() => null) : null;
      const cut = priceCutCall(
        {
          promptEstimate: this.promptEstimate,
          streamedChars: this.#streamedChars,
          lookedUpDollars,
        },
        this.prices,
      );
      // Its tokens are the estimate either way (the generation record gives only a cost).
      costMicros += cut.costMicros;
      tokens = addTokens(tokens, cut.tokens);
      if (cut.source === "provider") source = source === "estimate" ? source : "lookup";
      else source = "estimate";
    }
    const generationIds = this.#calls.filter((id): id is string => id !== null);
    return { costMicros, tokens, generationIds, source };
  }
}

/**
 * Waits between tries of a generation lookup. OpenRouter records a generation a little after it
 * ends, so a lookup right after an abort or a mid-stream error can answer 404 (the dev model shows
 * its records 500 ms after the end by default, `DEFAULT_GENERATION_DELAY_MS`). Doubling from 100 ms,
 * the tries land about 0, 0.1, 0.3, 0.7, 1.5 and 3.1 s after the first.
 */
export const GENERATION_LOOKUP_WAITS_MS = [100, 200, 400, 800, 1600] as const;
/** The most one lookup may take, tries and waits included, before the estimate prices the call. */
export const GENERATION_LOOKUP_BUDGET_MS = 5_000;

/**
 * OpenRouter's `GET /generation?id=`: what a generation cost, also for one the client aborted; null
 * when it cannot be known in time (the caller then estimates). A 404 (not recorded yet), a 429 or a
 * 5xx is tried again after the next wait; any other answer, a malformed body or the spent budget
 * ends the lookup. Every try is cut at what is left of the budget, so a provider that does not
 * answer costs at most `GENERATION_LOOKUP_BUDGET_MS`.
 */
export async function lookupGenerationCost(env: Env, generationId: string): Promise<number | null> {
  const url = `${env.MODEL_BASE_URL.replace(/\/$/, "")}/generation?id=${encodeURIComponent(generationId)}`;
  const deadline = Date.now() + GENERATION_LOOKUP_BUDGET_MS;
  for (let attempt = 0; ; attempt++) {
    const left = deadline - Date.now();
    if (left <= 0) return null;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${env.OPENROUTER_API_KEY || "dev"}` },
      signal: AbortSignal.timeout(left),
    }).catch(() => null);
    if (response?.ok) {
      const body = (await response.json().catch(() => null)) as {
        data?: { total_cost?: unknown };
      } | null;
      return usableDollars(body?.data?.total_cost);
    }
    const transient =
      response === null ||
      response.status === 404 ||
      response.status === 429 ||
      response.status >= 500;
    await response?.body?.cancel();
    const wait = GENERATION_LOOKUP_WAITS_MS[attempt];
    if (!transient || wait === undefined || Date.now() + wait >= deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

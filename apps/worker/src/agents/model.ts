import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import {
  costFromTokens,
  dollarsToMicrosCeil,
  type PriceTable,
  type TokenUsage,
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

export interface StepUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  inputTokenDetails?: { cacheReadTokens?: number | undefined };
  outputTokenDetails?: { reasoningTokens?: number | undefined };
}

/** `usage.cost` (dollars, a float) as OpenRouter reports it in each step's provider metadata. */
export function reportedCost(providerMetadata: unknown): number | null {
  const cost = (providerMetadata as { openrouter?: { usage?: { cost?: unknown } } } | undefined)
    ?.openrouter?.usage?.cost;
  return typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null;
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
 * the price table with the prompt estimate and the text streamed so far (4 characters a token).
 * Documented in docs/2026-11-29-agents.md.
 */
export class TurnMeter {
  readonly model: string;
  readonly promptEstimate: number;
  #calls: (string | null)[] = [];
  #finished: { costMicros: number; tokens: TokenUsage; generationId: string | null }[] = [];
  #streamedChars = 0;

  constructor(model: string, promptEstimate: number) {
    this.model = model;
    this.promptEstimate = promptEstimate;
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
  step(usage: StepUsage, providerMetadata: unknown, table: PriceTable): void {
    const tokens = toTokens(usage);
    const cost = reportedCost(providerMetadata);
    this.#finished.push({
      costMicros:
        cost === null ? costFromTokens(table, this.model, tokens) : dollarsToMicrosCeil(cost),
      tokens,
      generationId: this.#calls[this.#finished.length] ?? null,
    });
    this.#streamedChars = 0;
  }

  /** The turn's total, with calls that never finished looked up or estimated. */
  async total(
    lookup: (generationId: string) => Promise<number | null>,
    table: PriceTable,
  ): Promise<MeteredTurn> {
    let costMicros = 0;
    const tokens: TokenUsage = {
      promptTokens: 0,
      completionTokens: 0,
      cachedPromptTokens: 0,
      reasoningTokens: 0,
    };
    const add = (t: TokenUsage) => {
      tokens.promptTokens += t.promptTokens;
      tokens.completionTokens += t.completionTokens;
      tokens.cachedPromptTokens += t.cachedPromptTokens;
      tokens.reasoningTokens += t.reasoningTokens;
    };
    for (const step of this.#finished) {
      costMicros += step.costMicros;
      add(step.tokens);
    }
    let source: MeteredTurn["source"] = "reported";
    for (const generationId of this.#calls.slice(this.#finished.length)) {
      const looked = generationId ? await lookup(generationId).catch(() => null) : null;
      if (looked !== null) {
        costMicros += dollarsToMicrosCeil(looked);
        source = source === "estimate" ? source : "lookup";
        continue;
      }
      const estimate: TokenUsage = {
        promptTokens: this.promptEstimate,
        completionTokens: Math.ceil(this.#streamedChars / 4),
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      };
      costMicros += costFromTokens(table, this.model, estimate);
      add(estimate);
      source = "estimate";
    }
    const generationIds = this.#calls.filter((id): id is string => id !== null);
    return { costMicros, tokens, generationIds, source };
  }
}

function toTokens(usage: StepUsage): TokenUsage {
  const n = (v: number | undefined) =>
    typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;
  return {
    promptTokens: n(usage.inputTokens),
    completionTokens: n(usage.outputTokens),
    cachedPromptTokens: n(usage.inputTokenDetails?.cacheReadTokens),
    reasoningTokens: n(usage.outputTokenDetails?.reasoningTokens),
  };
}

/** OpenRouter's `GET /generation?id=`: what a generation cost, also for one the client aborted. */
export async function lookupGenerationCost(env: Env, generationId: string): Promise<number | null> {
  const url = `${env.MODEL_BASE_URL.replace(/\/$/, "")}/generation?id=${encodeURIComponent(generationId)}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${env.OPENROUTER_API_KEY || "dev"}` },
    });
    if (response.ok) {
      const body = (await response.json()) as { data?: { total_cost?: unknown } };
      const cost = body.data?.total_cost;
      return typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null;
    }
    if (response.status !== 404) return null;
    // The provider records a generation shortly after the stream ends.
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
  }
  return null;
}

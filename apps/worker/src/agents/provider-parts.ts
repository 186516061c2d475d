/**
 * The provider's shapes the metering middleware reads and makes (`@ai-sdk/provider`'s
 * LanguageModelV4): a call's usage as `priceStep` takes it, and the result of a call it refused.
 */
import type {
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { StepUsage } from "@parley/billing";
import type { StepAdmission } from "./turn-metering.ts";

/** Why a call was not made: the ledger's refusal (no credits, a spend limit, a reused id). */
export type CallRefusal = Exclude<StepAdmission, { ok: true }>;

const NO_USAGE: LanguageModelV4Usage = {
  inputTokens: {
    total: undefined,
    noCache: undefined,
    cacheRead: undefined,
    cacheWrite: undefined,
  },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/**
 * The provider's usage in the AI SDK's `LanguageModelUsage` shape, which `priceStep` takes: cache
 * reads and writes included, since a call priced from the table (an endpoint that reports no cost)
 * prices each at its own rate. `@ai-sdk/openai-compatible` maps `cached_tokens` but not
 * `cache_write_tokens`; an endpoint that reports the latter has it read from the raw usage.
 */
export function stepUsage(usage: LanguageModelV4Usage): StepUsage {
  return {
    inputTokens: usage.inputTokens.total,
    outputTokens: usage.outputTokens.total,
    inputTokenDetails: {
      cacheReadTokens: usage.inputTokens.cacheRead,
      cacheWriteTokens: usage.inputTokens.cacheWrite ?? rawCacheWrites(usage.raw),
    },
    outputTokenDetails: { reasoningTokens: usage.outputTokens.reasoning },
  };
}

/** `prompt_tokens_details.cache_write_tokens` of an OpenAI-shaped usage object, if a count. */
function rawCacheWrites(raw: LanguageModelV4Usage["raw"]): number | undefined {
  const details = raw?.prompt_tokens_details;
  if (typeof details !== "object" || details === null || Array.isArray(details)) return undefined;
  const written = (details as Record<string, unknown>).cache_write_tokens;
  return typeof written === "number" ? written : undefined;
}

function refusedFinish(refusal: CallRefusal | null): LanguageModelV4FinishReason {
  return { unified: "other", raw: `parley:${refusal?.reason ?? "refused"}` };
}

/**
 * A call that was not made: no content, nothing used. The SDK ends its tool loop there (a step
 * without tool calls); the agent says why from `refusal`.
 */
export function refusedStream(refusal: CallRefusal | null): LanguageModelV4StreamResult {
  return {
    stream: new ReadableStream({
      start(controller) {
        controller.enqueue({ type: "stream-start", warnings: [] });
        controller.enqueue({
          type: "finish",
          finishReason: refusedFinish(refusal),
          usage: NO_USAGE,
        });
        controller.close();
      },
    }),
  };
}

export function refusedGeneration(refusal: CallRefusal | null): LanguageModelV4GenerateResult {
  return { content: [], finishReason: refusedFinish(refusal), usage: NO_USAGE, warnings: [] };
}

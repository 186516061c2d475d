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

/** The provider's usage in the AI SDK's `LanguageModelUsage` shape, which `priceStep` takes. */
export function stepUsage(usage: LanguageModelV4Usage): StepUsage {
  return {
    inputTokens: usage.inputTokens.total,
    outputTokens: usage.outputTokens.total,
    inputTokenDetails: { cacheReadTokens: usage.inputTokens.cacheRead },
    outputTokenDetails: { reasoningTokens: usage.outputTokens.reasoning },
  };
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

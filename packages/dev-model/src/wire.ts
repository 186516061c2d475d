/**
 * The JSON the dev model writes for a completion, on OpenRouter's wire or a plain
 * OpenAI-compatible one (`DevModelSpec.api`): chunk envelopes, deltas, usage and the mid-stream
 * error event. Pure module.
 */
import { midStreamError } from "./errors.ts";
import type { CompletionPlan, Fault, Unit } from "./plan.ts";
import { computeCost, costParts } from "./pricing.ts";

/** The `provider` field of every OpenRouter chunk and `provider_name` of every generation. */
export const PROVIDER_NAME = "Parley Dev";
/** The SSE comment OpenRouter sends while it waits for the upstream model. */
export const PROCESSING_COMMENT = ": OPENROUTER PROCESSING\n\n";
/** The `system_fingerprint` of the OpenAI-compatible wire. */
export const LOCAL_FINGERPRINT = "parley-dev-local";

/** What the writers need of a running completion. */
export type RunInfo = {
  readonly id: string;
  readonly created: number;
  readonly plan: CompletionPlan;
  /** The id of tool call `index`, made once per completion. */
  toolCallId(index: number): string;
};

export function isOpenRouter(plan: CompletionPlan): boolean {
  return plan.spec.api === "openrouter";
}

export function chunkBase(run: RunInfo) {
  return isOpenRouter(run.plan)
    ? {
        id: run.id,
        provider: PROVIDER_NAME,
        model: run.plan.model,
        object: "chat.completion.chunk",
        created: run.created,
      }
    : {
        id: run.id,
        object: "chat.completion.chunk",
        created: run.created,
        model: run.plan.model,
        system_fingerprint: LOCAL_FINGERPRINT,
      };
}

export function choiceChunk(
  run: RunInfo,
  delta: Record<string, unknown>,
  finishReason: string | null,
) {
  const choice = isOpenRouter(run.plan)
    ? {
        index: 0,
        delta,
        finish_reason: finishReason,
        native_finish_reason: finishReason,
        logprobs: null,
      }
    : { index: 0, delta, logprobs: null, finish_reason: finishReason };
  return { ...chunkBase(run), choices: [choice] };
}

/** The delta that closes a stream with its finish reason, as each wire writes it. */
export function finishDelta(run: RunInfo): Record<string, unknown> {
  return isOpenRouter(run.plan) ? { role: "assistant", content: "" } : {};
}

/**
 * OpenRouter's unified mid-stream error: a top-level typed `error` plus a choice finishing with
 * "error". A plain OpenAI-compatible server sends only `{ error }`.
 */
export function errorChunk(run: RunInfo, fault: Extract<Fault, { kind: "error" }>) {
  const type = fault.errorType ?? "provider_unavailable";
  if (!isOpenRouter(run.plan)) return { error: midStreamError(type, "openai") };
  return {
    ...chunkBase(run),
    error: midStreamError(type, "openrouter"),
    choices: [
      {
        index: 0,
        delta: { role: "assistant", content: "" },
        finish_reason: "error",
        native_finish_reason: "error",
        logprobs: null,
      },
    ],
  };
}

export function reasoningDetail(text: string) {
  return { type: "reasoning.text", text, format: "unknown", index: 0 };
}

export function deltaOf(unit: Unit, run: RunInfo): Record<string, unknown> | null {
  switch (unit.kind) {
    case "reasoning":
      if (!unit.visible) return null;
      return {
        role: "assistant",
        content: "",
        reasoning: unit.text,
        reasoning_details: [reasoningDetail(unit.text)],
      };
    case "content":
      return { role: "assistant", content: unit.text };
    case "tool-name":
      return {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            index: unit.index,
            id: run.toolCallId(unit.index),
            type: "function",
            function: { name: unit.name, arguments: "" },
          },
        ],
      };
    case "tool-arguments":
      return {
        role: "assistant",
        content: null,
        tool_calls: [{ index: unit.index, function: { arguments: unit.text } }],
      };
  }
}

/**
 * `usage` after `completionTokens` went out. OpenRouter's carries `cost` (dollars), its parts and
 * the token details, with `cache_write_tokens` on models with a prompt cache; the OpenAI-compatible
 * wire carries tokens only, as llama.cpp, Ollama and vLLM do.
 */
export function usageOf(plan: CompletionPlan, completionTokens: number, reasoningTokens: number) {
  const totals = {
    prompt_tokens: plan.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: plan.promptTokens + completionTokens,
  };
  if (!isOpenRouter(plan)) return totals;
  const { promptCost, completionCost } = costParts(
    plan.model,
    plan.promptTokens,
    completionTokens,
    plan.cache,
  );
  return {
    ...totals,
    cost: computeCost(plan.model, plan.promptTokens, completionTokens, plan.cache),
    is_byok: false,
    prompt_tokens_details: plan.spec.promptCache
      ? {
          cached_tokens: plan.cache.readTokens,
          cache_write_tokens: plan.cache.writeTokens,
          audio_tokens: 0,
        }
      : { cached_tokens: 0, audio_tokens: 0 },
    cost_details: {
      upstream_inference_cost: null,
      upstream_inference_prompt_cost: promptCost,
      upstream_inference_completions_cost: completionCost,
    },
    completion_tokens_details: { reasoning_tokens: reasoningTokens, image_tokens: 0 },
  };
}

export function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

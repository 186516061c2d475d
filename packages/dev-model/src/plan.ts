/**
 * Decides what the dev model answers to one request, before any byte is sent: the units (one
 * completion token each) to stream, the finish reason, the fault to inject and the pacing.
 * Pure and deterministic, so a test can ask for the same plan the server follows.
 */
import type { ErrorType } from "./errors.ts";
import { type DevModelSpec, modelSpec } from "./models.ts";
import { type CacheTokens, computeCost, NO_CACHE } from "./pricing.ts";
import {
  DEFAULT_REASONING_TOKENS,
  DEFAULT_REPLY_TOKENS,
  markdownWords,
  reasoningWords,
  replyWords,
  toolResultWords,
} from "./reply.ts";
import { type ChatRequest, estimatePromptTokens, isRecord, textOf } from "./request.ts";
import { DEFAULT_FAULT_AFTER_TOKENS, parseTriggers, type Trigger } from "./triggers.ts";

export type Fault =
  | {
      readonly kind: "error";
      readonly afterTokens: number;
      /** The typed error (`error.metadata.error_type`); `provider_unavailable` when absent. */
      readonly errorType?: ErrorType;
    }
  | { readonly kind: "hang"; readonly afterTokens: number }
  | { readonly kind: "http-error"; readonly status: number };

/**
 * Server-wide defaults; triggers in a prompt override them for that request. A pace left
 * undefined is the model's own (`DevModelSpec.latencyMs`, `tokensPerSecond`).
 */
export type Behaviour = {
  readonly latencyMs: number | undefined;
  readonly tokensPerSecond: number | undefined;
  readonly replyTokens: number;
  readonly reasoningTokens: number;
  readonly fault: Fault | null;
};

export const DEFAULT_BEHAVIOUR: Behaviour = {
  latencyMs: undefined,
  tokensPerSecond: undefined,
  replyTokens: DEFAULT_REPLY_TOKENS,
  reasoningTokens: DEFAULT_REASONING_TOKENS,
  fault: null,
};

/** `Retry-After` seconds of a 429 or 503 when the prompt sets none with `[[retry-after:N]]`. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** Characters of tool-call arguments per streamed piece, and per completion token. */
export const TOOL_ARGUMENT_CHARS_PER_TOKEN = 4;

/** One completion token on the wire. Words after the first carry their leading space. */
export type Unit =
  | { readonly kind: "reasoning"; readonly text: string; readonly visible: boolean }
  | { readonly kind: "content"; readonly text: string }
  | { readonly kind: "tool-name"; readonly index: number; readonly name: string }
  | { readonly kind: "tool-arguments"; readonly index: number; readonly text: string };

export type FinishReason = "stop" | "length" | "tool_calls";

export type CompletionPlan = {
  readonly model: string;
  readonly spec: DevModelSpec;
  readonly promptTokens: number;
  /** Prompt tokens read from and written to the prompt cache (both 0 without one). */
  readonly cache: CacheTokens;
  readonly units: readonly Unit[];
  /** Reported when every unit was sent; a fault or a cancel ends the generation otherwise. */
  readonly finishReason: FinishReason;
  readonly fault: Fault | null;
  /** `Retry-After` of an HTTP 429 or 503 fault. */
  readonly retryAfterSeconds: number;
  /**
   * Whether the step sends a `reasoning.encrypted` detail before its tool calls: it reasons
   * visibly, ends in tool calls, and the model (or `[[reasoning:encrypted]]`) carries encrypted
   * reasoning.
   */
  readonly encryptedReasoning: boolean;
  readonly latencyMs: number;
  readonly tokensPerSecond: number;
};

export type PlanTotals = {
  readonly completionTokens: number;
  readonly reasoningTokens: number;
  readonly cost: number;
};

/** Tokens and cost after `sent` units went out (all of them when the generation completed). */
export function totalsAfter(plan: CompletionPlan, sent = plan.units.length): PlanTotals {
  const units = plan.units.slice(0, sent);
  const reasoningTokens = units.filter((u) => u.kind === "reasoning").length;
  return {
    completionTokens: units.length,
    reasoningTokens,
    cost: computeCost(plan.model, plan.promptTokens, units.length, plan.cache),
  };
}

/**
 * The plan for one request. `cache` is what the server's prompt cache read and wrote for it
 * (`PromptCache.use`); it changes the cost, not the reply.
 */
export function planCompletion(
  request: ChatRequest,
  behaviour: Behaviour = DEFAULT_BEHAVIOUR,
  cache: CacheTokens = NO_CACHE,
): CompletionPlan {
  const spec = modelSpec(request.model);
  const lastUser = lastUserText(request);
  const triggers = parseTriggers(lastUser).triggers;
  const last = request.messages.at(-1);
  const afterToolResult = last?.role === "tool";
  const first = <K extends Trigger["kind"]>(kind: K) =>
    triggers.find((t): t is Extract<Trigger, { kind: K }> => t.kind === kind);

  const replyTokens = first("tokens")?.count ?? behaviour.replyTokens;
  const budget = request.maxTokens ?? Number.POSITIVE_INFINITY;
  const units: Unit[] = [];
  let truncated = false;

  const reasoningTrigger = first("reasoning");
  const reasoning = spec.reasoning
    ? reasoningRequest(request, reasoningTrigger !== undefined, behaviour)
    : null;
  if (reasoning !== null) {
    const all = reasoningWords(lastUser, reasoning.count);
    const kept = all.slice(0, budget);
    truncated = kept.length < all.length;
    kept.forEach((word, i) => {
      units.push({
        kind: "reasoning",
        text: i === 0 ? word : ` ${word}`,
        visible: reasoning.visible,
      });
    });
  }

  // A tool result answers with text: re-reading the tool trigger there would loop forever.
  const toolCalls =
    afterToolResult || request.toolChoice === "none" ? [] : offeredTools(triggers, request);
  const remaining = budget - units.length;
  if (toolCalls.length > 0) {
    const toolUnits: Unit[] = [];
    toolCalls.forEach((call, index) => {
      toolUnits.push({ kind: "tool-name", index, name: call.name });
      for (let i = 0; i < call.arguments.length; i += TOOL_ARGUMENT_CHARS_PER_TOKEN) {
        const text = call.arguments.slice(i, i + TOOL_ARGUMENT_CHARS_PER_TOKEN);
        toolUnits.push({ kind: "tool-arguments", index, text });
      }
    });
    if (!truncated) {
      const kept = toolUnits.slice(0, Math.max(0, remaining));
      truncated = kept.length < toolUnits.length;
      units.push(...kept);
    }
  } else if (!truncated && first("markdown") !== undefined) {
    // A fixed document: `[[tokens:n]]` does not resize it, and each word keeps its own leading
    // whitespace (newlines) instead of a single space.
    const all = markdownWords();
    const kept = all.slice(0, Math.max(0, remaining));
    truncated = kept.length < all.length;
    for (const text of kept) units.push({ kind: "content", text });
  } else if (!truncated) {
    const all = afterToolResult
      ? toolResultReply(request, replyTokens)
      : replyWords(lastUser, replyTokens);
    const kept = all.slice(0, Math.max(0, remaining));
    truncated = kept.length < all.length;
    kept.forEach((word, i) => {
      units.push({ kind: "content", text: i === 0 ? word : ` ${word}` });
    });
  }

  const http = first("http-error");
  const error = first("error");
  const errorType = first("error-type")?.errorType;
  const hang = first("hang");
  const fault: Fault | null =
    http !== undefined
      ? { kind: "http-error", status: http.status }
      : error !== undefined || errorType !== undefined
        ? {
            kind: "error",
            afterTokens: error?.afterTokens ?? DEFAULT_FAULT_AFTER_TOKENS,
            ...(errorType === undefined ? {} : { errorType }),
          }
        : hang !== undefined
          ? { kind: "hang", afterTokens: hang.afterTokens }
          : behaviour.fault;

  const finishReason: FinishReason = truncated
    ? "length"
    : toolCalls.length > 0
      ? "tool_calls"
      : "stop";
  return {
    model: request.model,
    spec,
    promptTokens: estimatePromptTokens(request),
    cache,
    units,
    finishReason,
    fault,
    retryAfterSeconds: first("retry-after")?.seconds ?? DEFAULT_RETRY_AFTER_SECONDS,
    encryptedReasoning:
      finishReason === "tool_calls" &&
      reasoning?.visible === true &&
      (spec.encryptedReasoning || reasoningTrigger?.encrypted === true),
    latencyMs: first("latency")?.ms ?? behaviour.latencyMs ?? spec.latencyMs,
    tokensPerSecond:
      first("tps")?.tokensPerSecond ?? behaviour.tokensPerSecond ?? spec.tokensPerSecond,
  };
}

/** The text of the last `user` message (the triggers and the reply derive from it). */
export function lastUserText(request: Pick<ChatRequest, "messages">): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === "user") return textOf(message.content);
  }
  return "";
}

function reasoningRequest(
  request: ChatRequest,
  triggered: boolean,
  behaviour: Behaviour,
): { count: number; visible: boolean } | null {
  const param = isRecord(request.reasoning) ? request.reasoning : null;
  const disabled = param !== null && (param.enabled === false || param.effort === "none");
  const asked = (param !== null && !disabled) || request.includeReasoning === true || triggered;
  if (!asked) return null;
  const cap = param?.max_tokens;
  const count =
    typeof cap === "number" && Number.isInteger(cap) && cap > 0
      ? Math.min(cap, behaviour.reasoningTokens)
      : behaviour.reasoningTokens;
  return { count, visible: param?.exclude !== true };
}

function offeredTools(
  triggers: readonly Trigger[],
  request: ChatRequest,
): { name: string; arguments: string }[] {
  const calls: { name: string; arguments: string }[] = [];
  for (const t of triggers) {
    if (t.kind === "tool" && request.toolNames.has(t.name)) {
      calls.push({ name: t.name, arguments: t.arguments });
    }
  }
  return calls;
}

function toolResultReply(request: ChatRequest, count: number): string[] {
  const last = request.messages.at(-1);
  // OpenRouter's tool messages may carry `name`; otherwise find the call the result answers.
  const named = typeof last?.name === "string" && last.name !== "" ? last.name : undefined;
  const name = named ?? calledTool(request, last?.tool_call_id) ?? "tool";
  return toolResultWords(name, textOf(last?.content), count);
}

function calledTool(request: ChatRequest, callId: unknown): string | undefined {
  for (const message of request.messages) {
    if (message.role !== "assistant" || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      if (isRecord(call) && call.id === callId && isRecord(call.function)) {
        const name = call.function.name;
        if (typeof name === "string") return name;
      }
    }
  }
  return undefined;
}

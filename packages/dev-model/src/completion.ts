/**
 * Writing one completion: the SSE stream or the JSON body, on the plan's wire, and the generation
 * record OpenRouter keeps for it (what it cost, also when the client went away).
 */
import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { EncryptedReasoning } from "./encrypted-reasoning.ts";
import { MID_STREAM_ERRORS, midStreamError } from "./errors.ts";
import type { GenerationStore } from "./generations.ts";
import { type CompletionPlan, totalsAfter } from "./plan.ts";
import { cacheDiscount } from "./pricing.ts";
import {
  choiceChunk,
  chunkBase,
  deltaOf,
  errorChunk,
  finishDelta,
  isOpenRouter,
  PROCESSING_COMMENT,
  PROVIDER_NAME,
  type RunInfo,
  reasoningDetail,
  sse,
  usageOf,
} from "./wire.ts";

/** What writing a completion needs of the server. */
export type CompletionHost = {
  readonly processingIntervalMs: number;
  readonly generations: GenerationStore;
  /** How long after a generation ends `GET /api/v1/generation` first finds it. */
  readonly generationDelayMs: number;
  readonly encryptedReasoning: EncryptedReasoning;
};

export type Run = RunInfo & {
  readonly startedAt: number;
  firstTokenAt: number | null;
  sent: number;
  readonly streamed: boolean;
  readonly user: string | undefined;
  /** `stream_options.include_usage`: whether an OpenAI-compatible stream ends with usage. */
  readonly includeUsage: boolean;
};

export function startRun(
  plan: CompletionPlan,
  request: { stream: boolean; user: string | undefined; includeUsage: boolean },
  startedAt: number,
): Run {
  const toolCallIds = new Map<number, string>();
  return {
    // OpenRouter's generation id, or the completion id of a plain OpenAI-compatible server.
    id: isOpenRouter(plan)
      ? `gen-${Math.floor(startedAt / 1000)}-${randomId(20)}`
      : `chatcmpl-${randomId(24)}`,
    created: Math.floor(startedAt / 1000),
    plan,
    toolCallId(index) {
      let id = toolCallIds.get(index);
      if (id === undefined) {
        id = `call_${randomId(24)}`;
        toolCallIds.set(index, id);
      }
      return id;
    },
    startedAt,
    firstTokenAt: null,
    sent: 0,
    streamed: request.stream,
    user: request.user,
    includeUsage: request.includeUsage,
  };
}

export async function streamCompletion(
  host: CompletionHost,
  res: ServerResponse,
  run: Run,
  signal: AbortSignal,
): Promise<void> {
  const { plan } = run;
  const openRouter = isOpenRouter(plan);
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    ...(openRouter ? { "x-generation-id": run.id } : {}),
  });
  if (openRouter) write(res, PROCESSING_COMMENT);
  for (let waited = 0; waited < plan.latencyMs; ) {
    const step = Math.min(host.processingIntervalMs, plan.latencyMs - waited);
    await sleep(step, undefined, { signal });
    waited += step;
    if (openRouter && waited < plan.latencyMs) write(res, PROCESSING_COMMENT);
  }

  const interval = plan.tokensPerSecond > 0 ? 1000 / plan.tokensPerSecond : 0;
  const faultAt = midStreamFaultAt(plan);
  for (let i = 0; i < plan.units.length && i !== faultAt; i++) {
    if (interval > 0 && i > 0) await sleep(interval, undefined, { signal });
    const unit = plan.units[i];
    if (unit === undefined) break;
    if (unit.kind === "tool-name" && unit.index === 0 && plan.encryptedReasoning) {
      // The encrypted reasoning goes out with the step's reasoning, before its first tool call.
      const reasoning_details = [encryptedDetail(host, run)];
      write(
        res,
        sse(choiceChunk(run, { role: "assistant", content: "", reasoning_details }, null)),
      );
    }
    const delta = deltaOf(unit, run);
    if (delta !== null) write(res, sse(choiceChunk(run, delta, null)));
    run.firstTokenAt ??= Date.now();
    run.sent = i + 1;
  }

  if (plan.fault?.kind === "hang") {
    // Silence until the client gives up: no timer runs, the abort ends the wait.
    await waitForAbort(signal);
    throw new Error("aborted");
  }
  if (plan.fault?.kind === "error") {
    write(res, sse(errorChunk(run, plan.fault)));
    write(res, "data: [DONE]\n\n");
    res.end();
    recordGeneration(host, run, { cancelled: false, finishReason: "error" });
    return;
  }
  write(res, sse(choiceChunk(run, finishDelta(run), plan.finishReason)));
  const totals = totalsAfter(plan, run.sent);
  if (openRouter || run.includeUsage) {
    const usage = usageOf(plan, totals.completionTokens, totals.reasoningTokens);
    write(res, sse({ ...chunkBase(run), choices: [], usage }));
  }
  write(res, "data: [DONE]\n\n");
  res.end();
  recordGeneration(host, run, { cancelled: false, finishReason: plan.finishReason });
}

export async function jsonCompletion(
  host: CompletionHost,
  res: ServerResponse,
  run: Run,
  signal: AbortSignal,
): Promise<void> {
  const { plan } = run;
  const openRouter = isOpenRouter(plan);
  const faultAt = midStreamFaultAt(plan);
  const produced = faultAt >= 0 ? faultAt : plan.units.length;
  const interval = plan.tokensPerSecond > 0 ? 1000 / plan.tokensPerSecond : 0;
  const duration = plan.latencyMs + interval * Math.max(0, produced - 1);
  if (duration > 0) await sleep(duration, undefined, { signal });
  run.sent = produced;
  run.firstTokenAt = Date.now();
  if (plan.fault?.kind === "hang") {
    await waitForAbort(signal);
    throw new Error("aborted");
  }
  if (plan.fault?.kind === "error") {
    const type = plan.fault.errorType ?? "provider_unavailable";
    if (openRouter) {
      // Once the model started, OpenRouter answers 200 with the error in the body.
      sendJson(res, 200, { error: midStreamError(type, "openrouter") }, run.id);
      recordGeneration(host, run, { cancelled: false, finishReason: "error" });
    } else {
      // A plain server has not sent a byte yet: the failure is an HTTP error of its own status.
      sendJson(res, MID_STREAM_ERRORS[type].status, { error: midStreamError(type, "openai") });
    }
    return;
  }
  const units = plan.units.slice(0, run.sent);
  const reasoning = units
    .filter((u) => u.kind === "reasoning" && u.visible)
    .map((u) => (u.kind === "reasoning" ? u.text : ""))
    .join("");
  const toolCalls: {
    id: string;
    type: "function";
    function: { name: string; arguments: string };
  }[] = [];
  for (const unit of units) {
    if (unit.kind === "tool-name") {
      toolCalls[unit.index] = {
        id: run.toolCallId(unit.index),
        type: "function",
        function: { name: unit.name, arguments: "" },
      };
    } else if (unit.kind === "tool-arguments") {
      const call = toolCalls[unit.index];
      if (call !== undefined) call.function.arguments += unit.text;
    }
  }
  const details: unknown[] = reasoning === "" ? [] : [reasoningDetail(reasoning)];
  if (plan.encryptedReasoning && toolCalls.length > 0) details.push(encryptedDetail(host, run));
  const totals = totalsAfter(plan, run.sent);
  const content = units.map((u) => (u.kind === "content" ? u.text : "")).join("");
  const usage = usageOf(plan, totals.completionTokens, totals.reasoningTokens);
  const body = openRouter
    ? {
        id: run.id,
        provider: PROVIDER_NAME,
        model: plan.model,
        object: "chat.completion",
        created: run.created,
        choices: [
          {
            index: 0,
            logprobs: null,
            finish_reason: plan.finishReason,
            native_finish_reason: plan.finishReason,
            message: {
              role: "assistant",
              content,
              refusal: null,
              reasoning: reasoning === "" ? null : reasoning,
              ...(details.length === 0 ? {} : { reasoning_details: details }),
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
          },
        ],
        usage,
      }
    : {
        id: run.id,
        object: "chat.completion",
        created: run.created,
        model: plan.model,
        system_fingerprint: chunkBase(run).system_fingerprint,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: toolCalls.length > 0 && content === "" ? null : content,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
            logprobs: null,
            finish_reason: plan.finishReason,
          },
        ],
        usage,
      };
  sendJson(res, 200, body, openRouter ? run.id : undefined);
  recordGeneration(host, run, { cancelled: false, finishReason: plan.finishReason });
}

/** Units sent before a mid-stream fault fires, or -1 without one. */
function midStreamFaultAt(plan: CompletionPlan): number {
  const fault = plan.fault;
  if (fault === null || fault.kind === "http-error") return -1;
  return Math.min(fault.afterTokens, plan.units.length);
}

/** The step's `reasoning.encrypted` detail, issued for every tool call the plan makes. */
function encryptedDetail(host: CompletionHost, run: Run) {
  const ids = run.plan.units.flatMap((u) =>
    u.kind === "tool-name" ? [run.toolCallId(u.index)] : [],
  );
  const reasons = run.plan.units.some((u) => u.kind === "reasoning" && u.visible);
  return host.encryptedReasoning.issue(ids, reasons ? 1 : 0);
}

export type RunEnd = { cancelled: boolean; finishReason: string | null };

/**
 * Keeps OpenRouter's record of a generation, found by `GET /api/v1/generation` once
 * `generationDelayMs` has passed. A plain OpenAI-compatible server keeps none.
 */
export function recordGeneration(host: CompletionHost, run: Run, end: RunEnd): void {
  const { plan } = run;
  if (!isOpenRouter(plan)) return;
  const totals = totalsAfter(plan, run.sent);
  const now = Date.now();
  host.generations.add(
    {
      id: run.id,
      upstream_id: null,
      total_cost: totals.cost,
      cache_discount: cacheDiscount(plan.model, plan.cache),
      upstream_inference_cost: null,
      created_at: new Date(run.startedAt).toISOString(),
      model: plan.model,
      app_id: null,
      streamed: run.streamed,
      cancelled: end.cancelled,
      provider_name: PROVIDER_NAME,
      latency: (run.firstTokenAt ?? now) - run.startedAt,
      moderation_latency: null,
      generation_time: now - run.startedAt,
      finish_reason: end.finishReason,
      native_finish_reason: end.finishReason,
      tokens_prompt: plan.promptTokens,
      tokens_completion: totals.completionTokens,
      native_tokens_prompt: plan.promptTokens,
      native_tokens_completion: totals.completionTokens,
      native_tokens_completion_images: 0,
      native_tokens_reasoning: totals.reasoningTokens,
      native_tokens_cached: plan.cache.readTokens,
      num_media_prompt: null,
      num_input_audio_prompt: null,
      num_media_completion: 0,
      num_search_results: null,
      origin: "",
      usage: totals.cost,
      is_byok: false,
      external_user: run.user ?? null,
      api_type: "completions",
      router: null,
    },
    now + host.generationDelayMs,
  );
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

function write(res: ServerResponse, text: string): void {
  if (!res.destroyed && !res.writableEnded) res.write(text);
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  generationId?: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(generationId === undefined ? {} : { "x-generation-id": generationId }),
    ...headers,
  });
  res.end(body);
}

/**
 * The HTTP side of the dev model: OpenRouter's chat completions (SSE and JSON), generation lookup
 * and model list, plus a `/__dev/*` control surface for out-of-process tests.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type Generation, GenerationStore } from "./generations.ts";
import {
  type Behaviour,
  type CompletionPlan,
  DEFAULT_BEHAVIOUR,
  type Fault,
  planCompletion,
  totalsAfter,
  type Unit,
} from "./plan.ts";
import { computeCost, costParts, formatPrice, PRICES } from "./pricing.ts";
import { parseChatRequest } from "./request.ts";

/** The `provider` field of every chunk and `provider_name` of every generation. */
export const PROVIDER_NAME = "Parley Dev";
/** The SSE comment OpenRouter sends while it waits for the upstream model. */
export const PROCESSING_COMMENT = ": OPENROUTER PROCESSING\n\n";

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const DEFAULT_PROCESSING_INTERVAL_MS = 1000;
const DEFAULT_REQUEST_LIMIT = 10_000;
const MODELS_CREATED = 1_735_689_600;

export type DevModelOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay before the first token; `: OPENROUTER PROCESSING` comments keep flowing meanwhile. */
  latencyMs?: number;
  /** Pace of tokens; 0 (the default) sends them as fast as possible. */
  tokensPerSecond?: number;
  /** Words in a reply (default 24). */
  replyTokens?: number;
  /** Words of reasoning when reasoning is on (default 8). */
  reasoningTokens?: number;
  /** When set, only `Authorization: Bearer <apiKey>` is accepted; otherwise any bearer token is. */
  apiKey?: string;
  /** A fault injected into every chat request that has no fault trigger of its own. */
  fault?: Fault | null;
  /** Gap between `: OPENROUTER PROCESSING` comments while latency runs (default 1000 ms). */
  processingIntervalMs?: number;
  /** Generations kept for `GET /api/v1/generation` (default 10,000; the oldest go first). */
  generationLimit?: number;
};

/** A chat completion request as the server received it, recorded before any validation. */
export type RecordedRequest = {
  readonly seq: number;
  readonly receivedAt: string;
  readonly model: string | null;
  readonly stream: boolean;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  readonly body: unknown;
  /** Set once a generation started for the request. */
  readonly generationId: string | null;
};

export type DevModel = {
  /** Base URL ending in `/api/v1`, for `createOpenRouter({ baseURL })`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server, ends open streams (recorded as cancelled) and clears every timer. */
  close(): Promise<void>;
  generations(): readonly Generation[];
  generation(id: string): Generation | undefined;
  requests(): readonly RecordedRequest[];
  /** Forgets recorded requests and generations. */
  reset(): void;
};

type MutableRecordedRequest = { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] };

type Context = {
  readonly behaviour: Behaviour;
  readonly apiKey: string | undefined;
  readonly processingIntervalMs: number;
  readonly generations: GenerationStore;
  readonly requests: MutableRecordedRequest[];
  readonly active: Set<AbortController>;
  seq: number;
};

export async function startDevModel(options: DevModelOptions = {}): Promise<DevModel> {
  const host = options.host ?? "127.0.0.1";
  const ctx: Context = {
    behaviour: {
      latencyMs: nonNegative(options.latencyMs, DEFAULT_BEHAVIOUR.latencyMs),
      tokensPerSecond: nonNegative(options.tokensPerSecond, DEFAULT_BEHAVIOUR.tokensPerSecond),
      replyTokens: nonNegative(options.replyTokens, DEFAULT_BEHAVIOUR.replyTokens),
      reasoningTokens: nonNegative(options.reasoningTokens, DEFAULT_BEHAVIOUR.reasoningTokens),
      fault: options.fault ?? null,
    },
    apiKey: options.apiKey,
    processingIntervalMs: Math.max(
      1,
      nonNegative(options.processingIntervalMs, DEFAULT_PROCESSING_INTERVAL_MS),
    ),
    generations: new GenerationStore(options.generationLimit),
    requests: [],
    active: new Set(),
    seq: 0,
  };

  const server = createServer((req, res) => {
    handle(ctx, req, res).catch(() => {
      // Nothing useful can be sent once a handler failed mid-response: drop the connection.
      if (!res.headersSent) sendError(res, 500, "Internal dev model error");
      else res.destroy();
    });
  });
  // Keep idle connections longer than a client's pool does (workerd reuses them between calls): at
  // Node's 5 s default, a call can go out on a socket the server is closing ("connection lost").
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | null = null;
  return {
    url: `http://${urlHost}:${port}/api/v1`,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const controller of ctx.active) controller.abort();
        server.closeAllConnections();
      });
      return closing;
    },
    generations: () => ctx.generations.all(),
    generation: (id) => ctx.generations.get(id),
    requests: () => [...ctx.requests],
    reset() {
      ctx.requests.length = 0;
      ctx.generations.clear();
    },
  };
}

function nonNegative(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://dev-model.invalid");
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "x-generation-id");
  if (req.method === "OPTIONS") {
    res.writeHead(204, {
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers":
        "authorization, content-type, http-referer, x-title, x-openrouter-title",
    });
    res.end();
    return;
  }
  const route = `${req.method} ${url.pathname.replace(/\/+$/, "")}`;
  switch (route) {
    case "POST /api/v1/chat/completions":
      return chatCompletions(ctx, req, res);
    case "GET /api/v1/generation":
      return generation(ctx, req, res, url);
    case "GET /api/v1/models":
      return sendJson(res, 200, { data: modelList() });
    case "GET /__dev/requests":
      return sendJson(res, 200, { count: ctx.requests.length, requests: ctx.requests });
    case "GET /__dev/generations":
      return sendJson(res, 200, {
        count: ctx.generations.all().length,
        data: ctx.generations.all(),
      });
    case "POST /__dev/reset":
      ctx.requests.length = 0;
      ctx.generations.clear();
      return sendJson(res, 200, { ok: true });
    default:
      return sendError(res, 404, `No route for ${req.method} ${url.pathname}`);
  }
}

function authorized(ctx: Context, req: IncomingMessage, res: ServerResponse): boolean {
  const match = /^Bearer\s+(\S.*)$/i.exec(req.headers.authorization ?? "");
  if (match === null) {
    sendError(res, 401, "No auth credentials found");
    return false;
  }
  if (ctx.apiKey !== undefined && match[1]?.trim() !== ctx.apiKey) {
    sendError(res, 401, "User not found.");
    return false;
  }
  return true;
}

async function chatCompletions(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const startedAt = Date.now();
  const raw = await readBody(req);
  let json: unknown = raw;
  let validJson = false;
  if (raw !== null) {
    try {
      json = JSON.parse(raw);
      validJson = true;
    } catch {
      // Recorded as text below; answered with 400 after the auth check.
    }
  }
  const entry: MutableRecordedRequest = {
    seq: ++ctx.seq,
    receivedAt: new Date(startedAt).toISOString(),
    model: fieldOf(json, "model", "string"),
    stream: fieldOf(json, "stream", "boolean") ?? false,
    body: json,
    generationId: null,
  };
  ctx.requests.push(entry);
  if (ctx.requests.length > DEFAULT_REQUEST_LIMIT) ctx.requests.shift();

  if (!authorized(ctx, req, res)) return;
  if (raw === null) return sendError(res, 413, "Request body too large");
  if (!validJson) return sendError(res, 400, "Invalid JSON in request body");
  const parsed = parseChatRequest(json);
  if (!parsed.ok) return sendError(res, 400, parsed.message);
  const request = parsed.request;
  const plan = planCompletion(request, ctx.behaviour);
  if (plan.fault?.kind === "http-error") {
    return sendError(res, plan.fault.status, httpErrorMessage(plan.fault.status));
  }

  const run: Run = {
    id: generationId(),
    created: Math.floor(startedAt / 1000),
    startedAt,
    firstTokenAt: null,
    sent: 0,
    plan,
    streamed: request.stream,
    user: request.user,
    toolCallIds: new Map(),
  };
  entry.generationId = run.id;

  const controller = new AbortController();
  ctx.active.add(controller);
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  try {
    if (request.stream) await streamCompletion(ctx, res, run, controller.signal);
    else await jsonCompletion(ctx, res, run, controller.signal);
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    // The client went away (or the server is closing): bill what was sent, as OpenRouter does.
    recordGeneration(ctx, run, { cancelled: true, finishReason: null });
  } finally {
    ctx.active.delete(controller);
  }
}

type Run = {
  readonly id: string;
  readonly created: number;
  readonly startedAt: number;
  firstTokenAt: number | null;
  sent: number;
  readonly plan: CompletionPlan;
  readonly streamed: boolean;
  readonly user: string | undefined;
  readonly toolCallIds: Map<number, string>;
};

async function streamCompletion(
  ctx: Context,
  res: ServerResponse,
  run: Run,
  signal: AbortSignal,
): Promise<void> {
  const { plan } = run;
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-generation-id": run.id,
  });
  write(res, PROCESSING_COMMENT);
  for (let waited = 0; waited < plan.latencyMs; ) {
    const step = Math.min(ctx.processingIntervalMs, plan.latencyMs - waited);
    await sleep(step, undefined, { signal });
    waited += step;
    if (waited < plan.latencyMs) write(res, PROCESSING_COMMENT);
  }

  const interval = plan.tokensPerSecond > 0 ? 1000 / plan.tokensPerSecond : 0;
  const faultAt = midStreamFaultAt(plan);
  for (let i = 0; i < plan.units.length && i !== faultAt; i++) {
    if (interval > 0 && i > 0) await sleep(interval, undefined, { signal });
    const unit = plan.units[i];
    if (unit === undefined) break;
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
    write(res, sse(errorChunk(run)));
    write(res, "data: [DONE]\n\n");
    res.end();
    recordGeneration(ctx, run, { cancelled: false, finishReason: "error" });
    return;
  }
  write(res, sse(choiceChunk(run, { role: "assistant", content: "" }, plan.finishReason)));
  const totals = totalsAfter(plan, run.sent);
  write(
    res,
    sse({
      ...chunkBase(run),
      choices: [],
      usage: usageOf(plan, totals.completionTokens, totals.reasoningTokens),
    }),
  );
  write(res, "data: [DONE]\n\n");
  res.end();
  recordGeneration(ctx, run, { cancelled: false, finishReason: plan.finishReason });
}

async function jsonCompletion(
  ctx: Context,
  res: ServerResponse,
  run: Run,
  signal: AbortSignal,
): Promise<void> {
  const { plan } = run;
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
    // Once the model started, OpenRouter answers 200 with the error in the body.
    sendJson(res, 200, { error: { code: 502, message: MID_STREAM_ERROR } }, run.id);
    recordGeneration(ctx, run, { cancelled: false, finishReason: "error" });
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
        id: toolCallId(run, unit.index),
        type: "function",
        function: { name: unit.name, arguments: "" },
      };
    } else if (unit.kind === "tool-arguments") {
      const call = toolCalls[unit.index];
      if (call !== undefined) call.function.arguments += unit.text;
    }
  }
  const totals = totalsAfter(plan, run.sent);
  sendJson(
    res,
    200,
    {
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
            content: units.map((u) => (u.kind === "content" ? u.text : "")).join(""),
            refusal: null,
            reasoning: reasoning === "" ? null : reasoning,
            ...(reasoning === "" ? {} : { reasoning_details: [reasoningDetail(reasoning)] }),
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
        },
      ],
      usage: usageOf(plan, totals.completionTokens, totals.reasoningTokens),
    },
    run.id,
  );
  recordGeneration(ctx, run, { cancelled: false, finishReason: plan.finishReason });
}

/** Units sent before a mid-stream fault fires, or -1 without one. */
function midStreamFaultAt(plan: CompletionPlan): number {
  const fault = plan.fault;
  if (fault === null || fault.kind === "http-error") return -1;
  return Math.min(fault.afterTokens, plan.units.length);
}

const MID_STREAM_ERROR = "Dev model error requested by the prompt or server options";

function httpErrorMessage(status: number): string {
  if (status === 429) return "Rate limit exceeded (dev model)";
  if (status === 402) return "Insufficient credits (dev model)";
  return `Dev model HTTP error ${status}`;
}

type RunEnd = { cancelled: boolean; finishReason: string | null };

function recordGeneration(ctx: Context, run: Run, end: RunEnd): void {
  const { plan } = run;
  const totals = totalsAfter(plan, run.sent);
  const now = Date.now();
  ctx.generations.add({
    id: run.id,
    upstream_id: null,
    total_cost: totals.cost,
    cache_discount: null,
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
    native_tokens_cached: 0,
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
  });
}

async function generation(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!authorized(ctx, req, res)) return;
  const id = url.searchParams.get("id");
  if (id === null || id === "") return sendError(res, 400, "Missing generation id");
  const found = ctx.generations.get(id);
  if (found === undefined) return sendError(res, 404, `Generation ${id} not found`);
  sendJson(res, 200, { data: found });
}

function modelList(): unknown[] {
  return Object.entries(PRICES).map(([id, price]) => ({
    id,
    canonical_slug: id,
    name: price.name,
    created: MODELS_CREATED,
    description: "Served by the Parley dev model server at its price-table price.",
    context_length: price.contextLength,
    architecture: {
      modality: "text->text",
      input_modalities: ["text"],
      output_modalities: ["text"],
      tokenizer: "Other",
      instruct_type: null,
    },
    pricing: {
      prompt: formatPrice(price.prompt),
      completion: formatPrice(price.completion),
      request: "0",
      image: "0",
      web_search: "0",
      internal_reasoning: "0",
    },
    top_provider: {
      context_length: price.contextLength,
      max_completion_tokens: null,
      is_moderated: false,
    },
    per_request_limits: null,
    supported_parameters: ["include_reasoning", "max_tokens", "reasoning", "tool_choice", "tools"],
  }));
}

function chunkBase(run: Run) {
  return {
    id: run.id,
    provider: PROVIDER_NAME,
    model: run.plan.model,
    object: "chat.completion.chunk",
    created: run.created,
  };
}

function choiceChunk(run: Run, delta: Record<string, unknown>, finishReason: string | null) {
  return {
    ...chunkBase(run),
    choices: [
      {
        index: 0,
        delta,
        finish_reason: finishReason,
        native_finish_reason: finishReason,
        logprobs: null,
      },
    ],
  };
}

/** OpenRouter's unified mid-stream error: top-level `error` plus a choice finishing with "error". */
function errorChunk(run: Run) {
  return {
    ...chunkBase(run),
    error: { code: 502, message: MID_STREAM_ERROR },
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

function reasoningDetail(text: string) {
  return { type: "reasoning.text", text, format: "unknown", index: 0 };
}

function deltaOf(unit: Unit, run: Run): Record<string, unknown> | null {
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
            id: toolCallId(run, unit.index),
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

function usageOf(plan: CompletionPlan, completionTokens: number, reasoningTokens: number) {
  const { promptCost, completionCost } = costParts(plan.model, plan.promptTokens, completionTokens);
  return {
    prompt_tokens: plan.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: plan.promptTokens + completionTokens,
    cost: computeCost(plan.model, plan.promptTokens, completionTokens),
    is_byok: false,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    cost_details: {
      upstream_inference_cost: null,
      upstream_inference_prompt_cost: promptCost,
      upstream_inference_completions_cost: completionCost,
    },
    completion_tokens_details: { reasoning_tokens: reasoningTokens, image_tokens: 0 },
  };
}

function toolCallId(run: Run, index: number): string {
  let id = run.toolCallIds.get(index);
  if (id === undefined) {
    id = `call_${randomId(24)}`;
    run.toolCallIds.set(index, id);
  }
  return id;
}

function generationId(): string {
  return `gen-${Math.floor(Date.now() / 1000)}-${randomId(20)}`;
}

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
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

function fieldOf<T extends "string" | "boolean">(
  json: unknown,
  key: string,
  type: T,
): (T extends "string" ? string : boolean) | null {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const value = (json as Record<string, unknown>)[key];
  return typeof value === type ? (value as T extends "string" ? string : boolean) : null;
}

/** The body as text, or null when it exceeds the limit. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(buffer);
  }
  return tooLarge ? null : Buffer.concat(chunks).toString("utf8");
}

function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  generationId?: string,
): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...(generationId === undefined ? {} : { "x-generation-id": generationId }),
  });
  res.end(body);
}

/** OpenRouter's error shape; the HTTP status equals `error.code`. */
function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { code: status, message } });
}

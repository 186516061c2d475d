/**
 * The HTTP side of the dev model: OpenRouter's chat completions (SSE and JSON), generation lookup
 * and model list, plus a `/__dev/*` control surface for out-of-process tests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type CompletionHost,
  jsonCompletion,
  recordGeneration,
  sendJson,
  startRun,
  streamCompletion,
} from "./completion.ts";
import { EncryptedReasoning } from "./encrypted-reasoning.ts";
import { providerErrorBody, retriable } from "./errors.ts";
import { type Generation, GenerationStore } from "./generations.ts";
import { listedModels, modelSpec } from "./models.ts";
import { type Behaviour, DEFAULT_BEHAVIOUR, type Fault, planCompletion } from "./plan.ts";
import { NO_CACHE } from "./pricing.ts";
import { PromptCache, type PromptCacheOptions } from "./prompt-cache.ts";
import { type RateLimit, RateLimiter } from "./rate-limit.ts";
import { parseChatRequest } from "./request.ts";

export { PROCESSING_COMMENT, PROVIDER_NAME } from "./wire.ts";

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const DEFAULT_PROCESSING_INTERVAL_MS = 1000;
const DEFAULT_REQUEST_LIMIT = 10_000;
/**
 * How long after a generation ends `GET /api/v1/generation` first finds it, by default.
 * OpenRouter records a generation shortly after it ends (a lookup right after an abort can 404),
 * so a client's lookup has to retry; half a second makes every offline lookup do so.
 */
export const DEFAULT_GENERATION_DELAY_MS = 500;

export type DevModelOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Delay before the first token, for every model; `: OPENROUTER PROCESSING` comments keep flowing
   * meanwhile. Unset, each model keeps its own (`DevModelSpec.latencyMs`; 0 for `parley/dev`).
   */
  latencyMs?: number;
  /**
   * Pace of tokens for every model (0: as fast as possible). Unset, each model keeps its own
   * (`DevModelSpec.tokensPerSecond`; 0 for `parley/dev`).
   */
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
  /** How long after a generation ends the lookup first finds it (default 500 ms; 0: at once). */
  generationDelayMs?: number;
  /** The prompt cache of the models that have one (TTL, automatic-caching threshold). */
  promptCache?: PromptCacheOptions;
  /** Chat requests allowed per API key and window; past it, 429 with `Retry-After`. */
  rateLimit?: RateLimit;
};

/** A chat completion request as the server received it, recorded before any validation. */
export type RecordedRequest = {
  readonly seq: number;
  readonly receivedAt: string;
  readonly model: string | null;
  readonly stream: boolean;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  readonly body: unknown;
  /**
   * Set once a generation started for the request: OpenRouter's generation id, or on the
   * OpenAI-compatible wire the completion id (which has no generation record).
   */
  readonly generationId: string | null;
};

export type DevModel = {
  /** Base URL ending in `/api/v1`, for `createOpenRouter({ baseURL })`. */
  readonly url: string;
  readonly port: number;
  /** Stops the server, ends open streams (recorded as cancelled) and clears every timer. */
  close(): Promise<void>;
  /** Every generation record, including those the public endpoint does not show yet. */
  generations(): readonly Generation[];
  generation(id: string): Generation | undefined;
  requests(): readonly RecordedRequest[];
  /** Forgets recorded requests, generations, the prompt cache, reasoning to check and rate windows. */
  reset(): void;
};

type MutableRecordedRequest = { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] };

type Context = CompletionHost & {
  readonly behaviour: Behaviour;
  readonly apiKey: string | undefined;
  readonly promptCache: PromptCache;
  readonly rateLimiter: RateLimiter | null;
  readonly requests: MutableRecordedRequest[];
  readonly active: Set<AbortController>;
  seq: number;
};

export async function startDevModel(options: DevModelOptions = {}): Promise<DevModel> {
  const host = options.host ?? "127.0.0.1";
  const ctx: Context = {
    behaviour: {
      latencyMs: optional(options.latencyMs),
      tokensPerSecond: optional(options.tokensPerSecond),
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
    generationDelayMs: nonNegative(options.generationDelayMs, DEFAULT_GENERATION_DELAY_MS),
    encryptedReasoning: new EncryptedReasoning(),
    promptCache: new PromptCache(options.promptCache),
    rateLimiter: options.rateLimit ? new RateLimiter(options.rateLimit) : null,
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
    reset: () => reset(ctx),
  };
}

function reset(ctx: Context): void {
  ctx.requests.length = 0;
  ctx.generations.clear();
  ctx.promptCache.clear();
  ctx.encryptedReasoning.clear();
  ctx.rateLimiter?.clear();
}

function nonNegative(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function optional(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && value >= 0 ? value : undefined;
}

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://dev-model.invalid");
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "x-generation-id, retry-after");
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
      return sendJson(res, 200, { data: listedModels() });
    case "GET /__dev/requests":
      return sendJson(res, 200, { count: ctx.requests.length, requests: ctx.requests });
    case "GET /__dev/generations":
      return sendJson(res, 200, {
        count: ctx.generations.all().length,
        data: ctx.generations.all(),
      });
    case "POST /__dev/reset":
      reset(ctx);
      return sendJson(res, 200, { ok: true });
    default:
      return sendError(res, 404, `No route for ${req.method} ${url.pathname}`);
  }
}

/**
 * The caller's bearer token (`""` when a keyless OpenAI-compatible call is allowed), or null once
 * a 401 went out. A plain OpenAI-compatible server, like a local llama.cpp, takes calls without a
 * key unless the server sets one.
 */
function authorized(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  keyOptional = false,
): string | null {
  const match = /^Bearer\s+(\S.*)$/i.exec(req.headers.authorization ?? "");
  if (match === null) {
    if (keyOptional && ctx.apiKey === undefined) return "";
    sendError(res, 401, "No auth credentials found");
    return null;
  }
  const key = match[1]?.trim() ?? "";
  if (ctx.apiKey !== undefined && key !== ctx.apiKey) {
    sendError(res, 401, "User not found.");
    return null;
  }
  return key;
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

  const spec = modelSpec(entry.model ?? "");
  const openRouter = spec.api === "openrouter";
  const key = authorized(ctx, req, res, !openRouter);
  if (key === null) return;
  if (raw === null) return sendError(res, 413, "Request body too large");
  if (!validJson) return sendError(res, 400, "Invalid JSON in request body");
  const parsed = parseChatRequest(json);
  if (!parsed.ok) return sendError(res, 400, parsed.message);
  const request = parsed.request;
  const dialect = openRouter ? "openrouter" : "openai";

  const wait = ctx.rateLimiter?.take(key);
  if (wait !== undefined && wait !== null) {
    return sendJson(res, 429, providerErrorBody(429, dialect, wait), undefined, {
      "retry-after": String(wait),
    });
  }
  const lost = ctx.encryptedReasoning.missing(request);
  if (lost !== null) {
    return sendJson(res, 400, {
      error: { code: 400, message: lost, metadata: { error_type: "invalid_prompt" } },
    });
  }
  const planned = planCompletion(request, ctx.behaviour);
  if (planned.fault?.kind === "http-error") {
    const { status } = planned.fault;
    const retryAfter = retriable(status) ? planned.retryAfterSeconds : undefined;
    return sendJson(
      res,
      status,
      providerErrorBody(status, dialect, retryAfter),
      undefined,
      retryAfter === undefined ? {} : { "retry-after": String(retryAfter) },
    );
  }
  // The cache is touched only by a request that runs, and changes its cost, never its reply.
  const cache = spec.promptCache ? ctx.promptCache.use(request, startedAt) : NO_CACHE;
  const plan = { ...planned, cache };

  const run = startRun(plan, request, startedAt);
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

async function generation(
  ctx: Context,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (authorized(ctx, req, res) === null) return;
  const id = url.searchParams.get("id");
  if (id === null || id === "") return sendError(res, 400, "Missing generation id");
  const found = ctx.generations.visible(id);
  if (found === undefined) return sendError(res, 404, `Generation ${id} not found`);
  sendJson(res, 200, { data: found });
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

/** OpenRouter's error shape for its own refusals; the HTTP status equals `error.code`. */
function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: { code: status, message } });
}

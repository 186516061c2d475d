/**
 * The prompt cache of the dev models that have one, at message boundaries, the way Anthropic's
 * automatic caching and OpenAI's prefix caching behave: a request reads the longest prefix of its
 * messages (everything before the last message, after the tools) that an earlier request wrote,
 * and writes its whole prefix. The counts land in `usage.prompt_tokens_details` as
 * `cached_tokens` (read) and `cache_write_tokens` (written) and are priced at the model's cache
 * rates.
 *
 * A request uses the cache when it asks (a `[[cache]]` trigger, or `cache_control` on the request,
 * a message or a content part) or when its prefix reaches `minTokens` (automatic caching: 1024
 * tokens by default, OpenAI's minimum). A prefix is `floor(chars / 4)` tokens of the same
 * characters the prompt count uses, so it never exceeds `prompt_tokens`.
 */
import { createHash } from "node:crypto";
import { lastUserText } from "./plan.ts";
import { type CacheTokens, NO_CACHE } from "./pricing.ts";
import {
  type ChatMessage,
  type ChatRequest,
  isRecord,
  messageChars,
  toolsChars,
} from "./request.ts";
import { parseTriggers } from "./triggers.ts";

export type PromptCacheOptions = {
  /** How long an entry lives after it was last written or read (default 5 minutes). */
  readonly ttlMs?: number;
  /** Prefix size from which a request is cached without asking (default 1024 tokens). */
  readonly minTokens?: number;
  /** Entries kept (default 10,000; the oldest go first). */
  readonly limit?: number;
};

export const DEFAULT_PROMPT_CACHE_TTL_MS = 5 * 60_000;
export const DEFAULT_PROMPT_CACHE_MIN_TOKENS = 1024;

/** Whether the request asks for caching: `[[cache]]`, or `cache_control` anywhere OpenRouter takes it. */
export function cacheRequested(request: ChatRequest): boolean {
  if (parseTriggers(lastUserText(request)).triggers.some((t) => t.kind === "cache")) return true;
  if (request.body.cache_control !== undefined) return true;
  return request.messages.some(
    (message) =>
      message.cache_control !== undefined ||
      (Array.isArray(message.content) &&
        message.content.some((part) => isRecord(part) && part.cache_control !== undefined)),
  );
}

export class PromptCache {
  readonly #expiry = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #minTokens: number;
  readonly #limit: number;

  constructor(options: PromptCacheOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_PROMPT_CACHE_TTL_MS;
    this.#minTokens = options.minTokens ?? DEFAULT_PROMPT_CACHE_MIN_TOKENS;
    this.#limit = Math.max(1, options.limit ?? 10_000);
  }

  /** Reads and writes the request's prefix; what was read and written, in tokens. */
  use(request: ChatRequest, now = Date.now()): CacheTokens {
    const prefixes = prefixesOf(request);
    const full = prefixes.at(-1);
    if (full === undefined || full.tokens === 0) return NO_CACHE;
    if (!cacheRequested(request) && full.tokens < this.#minTokens) return NO_CACHE;
    let readTokens = 0;
    for (let k = prefixes.length - 1; k >= 0; k--) {
      const prefix = prefixes[k];
      if (prefix !== undefined && this.#live(prefix.key, now)) {
        readTokens = prefix.tokens;
        this.#store(prefix.key, now);
        break;
      }
    }
    const wasCached = this.#live(full.key, now);
    this.#store(full.key, now);
    return { readTokens, writeTokens: wasCached ? 0 : Math.max(0, full.tokens - readTokens) };
  }

  clear(): void {
    this.#expiry.clear();
  }

  #live(key: string, now: number): boolean {
    const expiresAt = this.#expiry.get(key);
    return expiresAt !== undefined && expiresAt > now;
  }

  #store(key: string, now: number): void {
    this.#expiry.delete(key);
    this.#expiry.set(key, now + this.#ttlMs);
    while (this.#expiry.size > this.#limit) {
      const oldest = this.#expiry.keys().next();
      if (oldest.done) break;
      this.#expiry.delete(oldest.value);
    }
  }
}

/**
 * Every cacheable prefix of the request, shortest first: the tools and the first k messages, for
 * k from 1 to all but the last message. Each key hashes the model, the tools and what of each
 * message counts as prompt (role, text, other parts without their `cache_control`, tool calls).
 */
function prefixesOf(request: ChatRequest): { key: string; tokens: number }[] {
  const hash = createHash("sha256");
  hash.update(`${request.model}\u0000${JSON.stringify(request.tools ?? null)}`);
  let chars = toolsChars(request.tools);
  const prefixes: { key: string; tokens: number }[] = [];
  for (const message of request.messages.slice(0, -1)) {
    hash.update(`\u0000${promptContent(message)}`);
    chars += messageChars(message);
    prefixes.push({ key: hash.copy().digest("hex"), tokens: Math.floor(chars / 4) });
  }
  return prefixes;
}

function promptContent(message: ChatMessage): string {
  const content = Array.isArray(message.content)
    ? message.content.map((part) => {
        if (!isRecord(part)) return part;
        const { cache_control: _, ...rest } = part;
        return rest;
      })
    : (message.content ?? null);
  return JSON.stringify([message.role, content, message.tool_calls ?? null]);
}

import { createOpenAICompatible, type OpenAICompatibleProvider } from "@ai-sdk/openai-compatible";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createOpenRouter, type OpenRouterProvider } from "@openrouter/ai-sdk-provider";
import { usableDollars } from "@parley/billing";
import { type CatalogueModel, modelEndpoint } from "../assistants/catalogue-model.ts";

const clients = new WeakMap<object, OpenRouterProvider>();
/** OpenAI-compatible clients per `env`, by endpoint and key secret (one per catalogue entry's). */
const compatibles = new WeakMap<object, Map<string, OpenAICompatibleProvider>>();
/** Key secrets already reported missing in this isolate (warned once each, by name). */
const missingKeys = new Set<string>();

/**
 * The model client: `@openrouter/ai-sdk-provider` against `MODEL_BASE_URL` (OpenRouter, the local
 * dev model, or any OpenAI-compatible server), made once per `env`. Every turn wraps its model in
 * its metering middleware (metering-middleware.ts), which reads each call's generation id from the
 * `X-Generation-Id` response header the provider hands back with the stream.
 */
export function modelClient(env: Env): OpenRouterProvider {
  let client = clients.get(env);
  if (!client) {
    client = createOpenRouter({
      apiKey: env.OPENROUTER_API_KEY || "dev",
      baseURL: env.MODEL_BASE_URL,
    });
    clients.set(env, client);
  }
  return client;
}

/**
 * The language model a catalogue entry names (docs/2026-12-06-assistant-profiles.md, "How a turn
 * resolves its profile and model"): an OpenRouter entry through `@openrouter/ai-sdk-provider`
 * (usage and cost in every stream), an `openai-compatible` entry through `@ai-sdk/openai-compatible`
 * at its `baseUrl` (null: `MODEL_BASE_URL`) with the key of the secret it names, asking for usage in
 * the stream (`includeUsage`: such endpoints send a usage chunk only when asked, and without it a
 * call could only be estimated). It reports no cost, so the metering middleware prices its usage
 * from the catalogue's table.
 */
export function languageModel(env: Env, model: CatalogueModel): LanguageModelV4 {
  const { provider } = model;
  if (provider.type === "openrouter") {
    return modelClient(env).chat(model.id, { usage: { include: true } });
  }
  const baseURL = modelEndpoint(env, model);
  const key = JSON.stringify([baseURL, provider.apiKeySecret]);
  let byEntry = compatibles.get(env);
  if (!byEntry) {
    byEntry = new Map();
    compatibles.set(env, byEntry);
  }
  let client = byEntry.get(key);
  if (!client) {
    const apiKey = secretValue(env, provider.apiKeySecret);
    client = createOpenAICompatible({
      name: "openaiCompatible",
      baseURL,
      ...(apiKey ? { apiKey } : {}),
      includeUsage: true,
    });
    byEntry.set(key, client);
  }
  return client.chatModel(model.id);
}

/**
 * The key an entry's `apiKeySecret` names, read from the Worker's secrets. A name the Worker does
 * not have goes out without a key (the endpoint refuses, and the call is released: nothing is
 * charged), and is reported once per isolate by NAME, never by value.
 */
function secretValue(env: Env, name: string | null): string | undefined {
  if (name === null) return undefined;
  const value = (env as unknown as Record<string, unknown>)[name];
  if (typeof value === "string" && value !== "") return value;
  if (!missingKeys.has(name)) {
    missingKeys.add(name);
    console.warn(JSON.stringify({ level: "warn", source: "model-client", missingSecret: name }));
  }
  return undefined;
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

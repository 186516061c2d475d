import { createOpenRouter, type OpenRouterProvider } from "@openrouter/ai-sdk-provider";
import { usableDollars } from "@parley/billing";

const clients = new WeakMap<object, OpenRouterProvider>();

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

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

/** OpenRouter's `GET /generation?id=`: what a generation cost, also for one the client aborted. */
export async function lookupGenerationCost(env: Env, generationId: string): Promise<number | null> {
  const url = `${env.MODEL_BASE_URL.replace(/\/$/, "")}/generation?id=${encodeURIComponent(generationId)}`;
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${env.OPENROUTER_API_KEY || "dev"}` },
    });
    if (response.ok) {
      const body = (await response.json()) as { data?: { total_cost?: unknown } };
      return usableDollars(body.data?.total_cost);
    }
    if (response.status !== 404) return null;
    // The provider records a generation shortly after the stream ends.
    await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
  }
  return null;
}

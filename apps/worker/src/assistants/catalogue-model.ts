import type { ModelPrice, OpenRouterPricing } from "@parley/billing";
import type { ModelProvider } from "@parley/shared";
import { isLoopbackUrl } from "../env.ts";

/** A sampling parameter's allowed values. */
export interface Range {
  min: number;
  max: number;
}

/**
 * One model of the catalogue as the platform holds it: what the provider calls it and where it is
 * served, what it can do, and its prices, as published and as integer micro-dollars.
 */
export interface CatalogueModel {
  /** The provider's model id (`openai/gpt-4o-mini`). */
  id: string;
  provider:
    | { type: "openrouter" }
    | {
        type: "openai-compatible";
        /** Null: the platform's MODEL_BASE_URL (the dev model offline). */
        baseUrl: string | null;
        /** The NAME of the Worker secret with the endpoint's key; null: no key. */
        apiKeySecret: string | null;
      };
  displayName: string;
  contextWindow: number;
  maxOutputTokens: number;
  capabilities: { tools: boolean; reasoning: boolean };
  /** May the free onboarding preview use it. */
  freePreview: boolean;
  /** The temperatures it takes when it limits them; null: 0 to 2. */
  temperature: Range | null;
  /** The top-p values it takes when it limits them; null: 0 to 1. */
  topP: Range | null;
  /** As published (OpenRouter's shape). */
  pricing: OpenRouterPricing;
  /** The same, converted exactly: the price table's row for the model. */
  price: ModelPrice;
  /** A retired model is not offered and is refused wherever it is named. */
  retired: boolean;
  retiredAt: number | null;
  /** Where the entry came from: configuration, or an operator's edit (which wins). */
  source: "config" | "operator";
  updatedAt: number | null;
}

export type ProviderType = ModelProvider;

/** Where a catalogue entry's calls go: `MODEL_BASE_URL`, or its own OpenAI-compatible endpoint. */
export function modelEndpoint(env: Env, model: CatalogueModel): string {
  const { provider } = model;
  return provider.type === "openrouter"
    ? env.MODEL_BASE_URL
    : (provider.baseUrl ?? env.MODEL_BASE_URL);
}

/**
 * Whether a model is answered on the platform's own machine: under `pnpm dev` offline every entry
 * without an endpoint of its own goes to the local dev model, which answers any model id, so the
 * pickers say so rather than let "GPT-4o mini" pass for the real one.
 */
export const servedLocally = (env: Env, model: CatalogueModel): boolean =>
  isLoopbackUrl(modelEndpoint(env, model));

import type { ModelPrice, OpenRouterPricing } from "@parley/billing";
import type { ModelProvider } from "@parley/shared";

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

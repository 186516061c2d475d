import { modelPriceFromPricing } from "@parley/billing";
import {
  type CatalogueEntry,
  type CatalogueEntryInput,
  catalogueEntrySchema,
} from "@parley/shared";
import { z } from "zod";
import type { CatalogueModel } from "./catalogue-model.ts";

/**
 * The catalogue as configuration defines it, before the operator's edits (D1 `catalogue_models`,
 * catalogue.ts) are merged over it: the single place the platform's models and their prices live
 * (they were `DEFAULT_PRICES` in billing/prices.ts until 2026-12-06). Prices are OpenRouter's
 * published strings, converted exactly; a figure that does not convert fails the first request
 * loudly, like every malformed var.
 */

const openRouter = { type: "openrouter" } as const;

/**
 * OpenRouter models at their public list prices (the figures the old price table carried).
 * They report their cost, which wins over these; the table sizes holds and shows prices.
 */
const PLATFORM_MODELS: CatalogueEntryInput[] = [
  {
    id: "openai/gpt-4o-mini",
    provider: openRouter,
    displayName: "OpenAI: GPT-4o-mini",
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: { tools: true, reasoning: false },
    freePreview: true,
    pricing: { prompt: "0.00000015", completion: "0.0000006" },
  },
  {
    id: "openai/gpt-4.1",
    provider: openRouter,
    displayName: "OpenAI: GPT-4.1",
    contextWindow: 1_047_576,
    maxOutputTokens: 32_768,
    capabilities: { tools: true, reasoning: false },
    pricing: { prompt: "0.000002", completion: "0.000008" },
  },
  {
    id: "anthropic/claude-sonnet-4.5",
    provider: openRouter,
    displayName: "Anthropic: Claude Sonnet 4.5",
    contextWindow: 1_000_000,
    maxOutputTokens: 64_000,
    capabilities: { tools: true, reasoning: true },
    // Anthropic's API takes temperatures from 0 to 1.
    temperature: { min: 0, max: 1 },
    pricing: { prompt: "0.000003", completion: "0.000015" },
  },
  {
    id: "google/gemini-2.5-flash",
    provider: openRouter,
    displayName: "Google: Gemini 2.5 Flash",
    contextWindow: 1_048_576,
    maxOutputTokens: 65_535,
    capabilities: { tools: true, reasoning: true },
    pricing: { prompt: "0.0000003", completion: "0.0000025" },
  },
];

/**
 * The dev model's ids (packages/dev-model), listed only where the platform talks to it
 * (`CATALOGUE_DEV_MODELS`: `pnpm dev` without an OpenRouter key, the tests, the benchmarks), never
 * in production. Their figures are the dev model's own listing, so what it reports as a call's
 * cost is what the catalogue shows.
 */
const DEV_MODELS: CatalogueEntryInput[] = [
  {
    id: "parley/dev",
    provider: openRouter,
    displayName: "Parley Dev Model",
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: { tools: true, reasoning: true },
    freePreview: true,
    pricing: { prompt: "0.000001", completion: "0.000002" },
  },
  {
    id: "parley/dev-fast",
    provider: openRouter,
    displayName: "Parley Dev Fast",
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: { tools: true, reasoning: false },
    freePreview: true,
    pricing: {
      prompt: "0.0000001",
      completion: "0.0000004",
      input_cache_read: "0.000000025",
      input_cache_write: "0.000000125",
    },
  },
  {
    id: "parley/dev-large",
    provider: openRouter,
    displayName: "Parley Dev Large",
    contextWindow: 200_000,
    maxOutputTokens: 64_000,
    capabilities: { tools: true, reasoning: true },
    temperature: { min: 0, max: 1 },
    pricing: {
      prompt: "0.000003",
      completion: "0.000015",
      input_cache_read: "0.0000003",
      input_cache_write: "0.00000375",
    },
  },
  {
    // Like a local llama.cpp, Ollama or vLLM server: it reports no cost, so the table prices it.
    id: "parley/dev-local",
    provider: { type: "openai-compatible", baseUrl: null, apiKeySecret: null },
    displayName: "Parley Dev Local (OpenAI-compatible)",
    contextWindow: 32_768,
    maxOutputTokens: 4_096,
    capabilities: { tools: true, reasoning: false },
    pricing: { prompt: "0.0000002", completion: "0.0000006" },
  },
];

/**
 * The entry made for a platform default model (`MODEL_ID`) the configuration does not list: the
 * platform's default is always in the catalogue, at the price any unlisted model had before
 * ($1 and $2 per million tokens).
 */
function unlistedDefault(id: string): CatalogueEntryInput {
  return {
    id,
    provider: openRouter,
    displayName: id,
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    capabilities: { tools: true, reasoning: false },
    freePreview: true,
    pricing: { prompt: "0.000001", completion: "0.000002" },
  };
}

/** A checked entry as the catalogue holds it, or an error naming the model and field. */
export function catalogueModelOf(
  entry: CatalogueEntry,
  source: CatalogueModel["source"],
  meta: { retiredAt: number | null; updatedAt: number | null } = {
    retiredAt: null,
    updatedAt: null,
  },
): CatalogueModel | { error: string; field: string } {
  const converted = modelPriceFromPricing(entry.pricing, "exact");
  if (!converted.ok) {
    return {
      error: `pricing.${converted.field} ${converted.reason}`,
      field: `pricing.${converted.field}`,
    };
  }
  const { retired, ...rest } = entry;
  return {
    ...rest,
    price: converted.price,
    // An entry may come retired (an operator's, or configuration's `retired: true`).
    retired: retired === true || meta.retiredAt !== null,
    retiredAt: meta.retiredAt,
    source,
    updatedAt: meta.updatedAt,
  };
}

/** What of the Worker's vars shapes the configured catalogue. */
export interface CatalogueVars {
  MODEL_ID: string;
  CATALOGUE_DEV_MODELS?: string | undefined;
  MODEL_CATALOGUE?: string | undefined;
}

const overridesSchema = z.array(z.unknown());

/**
 * The configured catalogue, in order: the platform's models, the dev model's where it is used,
 * `MODEL_CATALOGUE` (a JSON array of entries in the operator's shape) merged over them by id, and
 * the platform default model made up when none of them lists it. Throws on a malformed entry.
 */
export function configuredCatalogue(vars: CatalogueVars): CatalogueModel[] {
  const byId = new Map<string, CatalogueEntryInput>();
  for (const entry of PLATFORM_MODELS) byId.set(entry.id, entry);
  if (vars.CATALOGUE_DEV_MODELS === "true")
    for (const entry of DEV_MODELS) byId.set(entry.id, entry);
  if (vars.MODEL_CATALOGUE) {
    const overrides = overridesSchema.parse(JSON.parse(vars.MODEL_CATALOGUE));
    for (const raw of overrides) {
      const entry = catalogueEntrySchema.parse(raw);
      byId.set(entry.id, entry);
    }
  }
  if (!byId.has(vars.MODEL_ID)) byId.set(vars.MODEL_ID, unlistedDefault(vars.MODEL_ID));
  return [...byId.values()].map((input) => {
    const model = catalogueModelOf(catalogueEntrySchema.parse(input), "config");
    if ("error" in model) throw new Error(`catalogue entry ${input.id}: ${model.error}`);
    return model;
  });
}

const configured = new Map<string, CatalogueModel[]>();

/** {@link configuredCatalogue}, made once per isolate and configuration. */
export function configCatalogue(vars: CatalogueVars): CatalogueModel[] {
  const key = JSON.stringify([vars.MODEL_ID, vars.CATALOGUE_DEV_MODELS, vars.MODEL_CATALOGUE]);
  let models = configured.get(key);
  if (!models) {
    models = configuredCatalogue(vars);
    configured.set(key, models);
  }
  return models;
}

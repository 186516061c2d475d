import { applyMarkup, type ModelPrice, type PriceTable, type StepPrices } from "@parley/billing";
import {
  type CatalogueModel as CatalogueModelOut,
  catalogueEntrySchema,
  type ModelPrices,
  type OperatorModel,
} from "@parley/shared";
import { iso } from "../db/pagination.ts";
import { agentSettings } from "../env.ts";
import { type CatalogueVars, catalogueModelOf, configCatalogue } from "./catalogue-config.ts";
import { type CatalogueModel, servedLocally } from "./catalogue-model.ts";

/**
 * The platform's model catalogue (docs/2026-12-06-assistant-profiles.md): the configured entries
 * (catalogue-config.ts) with the operator's (D1 `catalogue_models`) merged over them by id, read
 * with a small per-isolate cache. The agents read it every turn through the resolver, so a read is
 * a map lookup; the operator's edits reach this isolate at once and others within
 * {@link CATALOGUE_CACHE_MS}.
 */

export interface Catalogue {
  /** Every entry by id, retired ones included (a stored reference must be told why it is refused). */
  models: ReadonlyMap<string, CatalogueModel>;
  /** The models that may be chosen, in the configuration's order, then the operator's additions. */
  live: readonly CatalogueModel[];
  /** The platform's default model (`MODEL_ID`): always listed, never retired. */
  defaultModel: string;
}

/** How long an isolate trusts its copy of the operator's entries. */
export const CATALOGUE_CACHE_MS = 30_000;

interface StoredRow {
  id: string;
  entry: string;
  retired_at: number | null;
  updated_at: number;
}

/** Per isolate: the operator's rows as last read, and the catalogue merged from them. */
let stored: { at: number; rows: StoredRow[] } | null = null;
let merged: { rows: StoredRow[]; key: string; catalogue: Catalogue } | null = null;

const varsOf = (env: Env): CatalogueVars => ({
  MODEL_ID: env.MODEL_ID,
  CATALOGUE_DEV_MODELS: env.CATALOGUE_DEV_MODELS,
  MODEL_CATALOGUE: env.MODEL_CATALOGUE,
});

/**
 * When this isolate's copy began to be read again (a stale copy is served meanwhile), and how
 * many `forgetCatalogue` calls there have been (a read begun before one is not kept).
 */
let refreshingSince: number | null = null;
let epoch = 0;
/** A refresh that has not finished in this long is taken as lost (its request was cut). */
const REFRESH_TIMEOUT_MS = 5_000;

/** Forgets the operator's entries this isolate read: the operator's routes call it after a write. */
export function forgetCatalogue(): void {
  stored = null;
  merged = null;
  refreshingSince = null;
  epoch++;
}

function mergeCatalogue(vars: CatalogueVars, rows: readonly StoredRow[]): Catalogue {
  const models = new Map<string, CatalogueModel>();
  for (const model of configCatalogue(vars)) models.set(model.id, model);
  for (const row of rows) {
    const parsed = catalogueEntrySchema.safeParse(JSON.parse(row.entry));
    const model = parsed.success
      ? catalogueModelOf(parsed.data, "operator", {
          retiredAt: row.retired_at,
          updatedAt: row.updated_at,
        })
      : null;
    if (model === null || "error" in model) {
      // Written only after the same checks, so this is a bug or a hand edit: the configured
      // entry (if any) stays, and the row's id, not its content, is logged.
      console.warn(JSON.stringify({ level: "warn", source: "catalogue", badEntry: row.id }));
      continue;
    }
    models.set(model.id, model);
  }
  return {
    models,
    live: [...models.values()].filter((model) => !model.retired),
    defaultModel: vars.MODEL_ID,
  };
}

/** The catalogue, from this isolate's copy while it is fresh. */
export async function loadCatalogue(env: Env, now = Date.now()): Promise<Catalogue> {
  const vars = varsOf(env);
  const refreshing = refreshingSince !== null && now - refreshingSince < REFRESH_TIMEOUT_MS;
  // A stale copy is read again by one caller while the others keep using it: every object of
  // the isolate asks, and each read D1 itself (under the soak's 40 sessions, 24 reads of the same
  // rows at one expiry; docs/2026-12-06-soak-memory.md). Only plain data is shared: a promise of
  // another request's I/O may not be awaited in workerd. With no copy at all, each caller reads.
  if (!stored || (now - stored.at >= CATALOGUE_CACHE_MS && !refreshing)) {
    const began = epoch;
    if (stored) refreshingSince = now;
    let results: StoredRow[];
    try {
      ({ results } = await env.DB.prepare(
        "SELECT id, entry, retired_at, updated_at FROM catalogue_models ORDER BY id",
      ).all<StoredRow>());
    } finally {
      if (began === epoch) refreshingSince = null;
    }
    // Read before the operator's write forgot the copy: used for this call, not kept.
    if (began !== epoch) return mergeCatalogue(vars, results);
    stored = { at: now, rows: results };
  }
  const key = JSON.stringify(vars);
  if (!merged || merged.rows !== stored.rows || merged.key !== key) {
    merged = { rows: stored.rows, key, catalogue: mergeCatalogue(vars, stored.rows) };
  }
  return merged.catalogue;
}

const tables = new WeakMap<CatalogueModel, PriceTable>();

/**
 * What prices a call to `model` (`priceStep`, `priceCutCall`, `maxCallCostMicros`): its row of
 * the table, and the platform's markup. The table is made once per catalogue entry.
 */
export function stepPricesFor(model: CatalogueModel, markupBps: number): StepPrices {
  let table = tables.get(model);
  if (!table) {
    table = { models: { [model.id]: model.price }, default: model.price };
    tables.set(model, table);
  }
  return { table, model: model.id, markupBps };
}

/** A price as the API shows it; with a markup, what the org is charged per unit (rounded up). */
export function pricesOf(price: ModelPrice, markupBps = 0): ModelPrices {
  const charged = (micros: number) => applyMarkup(micros, markupBps);
  const optional = (micros: number | null | undefined) =>
    micros === null || micros === undefined ? null : charged(micros);
  return {
    promptMicrosPerMTok: charged(price.promptMicrosPerMTok),
    completionMicrosPerMTok: charged(price.completionMicrosPerMTok),
    reasoningMicrosPerMTok: optional(price.reasoningMicrosPerMTok),
    cacheReadMicrosPerMTok: optional(price.cachedPromptMicrosPerMTok),
    cacheWriteMicrosPerMTok: optional(price.cacheWriteMicrosPerMTok),
    requestMicros: charged(price.requestMicros ?? 0),
  };
}

/** A model as members see it: never its endpoint or key; prices with the platform's markup. */
export function toCatalogueModel(env: Env, model: CatalogueModel): CatalogueModelOut {
  return {
    id: model.id,
    displayName: model.displayName,
    provider: model.provider.type,
    contextWindow: model.contextWindow,
    maxOutputTokens: model.maxOutputTokens,
    capabilities: model.capabilities,
    freePreview: model.freePreview,
    temperature: model.temperature,
    topP: model.topP,
    prices: pricesOf(model.price, agentSettings(env).prices.markupBps),
    servedLocally: servedLocally(env, model),
  };
}

/** A model as the platform operator sees it, with how many live profiles name it. */
export function toOperatorModel(model: CatalogueModel, profiles: number): OperatorModel {
  return {
    id: model.id,
    displayName: model.displayName,
    provider: model.provider,
    contextWindow: model.contextWindow,
    maxOutputTokens: model.maxOutputTokens,
    capabilities: model.capabilities,
    freePreview: model.freePreview,
    temperature: model.temperature,
    topP: model.topP,
    // As the operator (or configuration) published it; `costs` is what it converted to.
    pricing: model.pricing,
    costs: pricesOf(model.price),
    retired: model.retired,
    retiredAt: model.retiredAt === null ? null : iso(model.retiredAt),
    source: model.source,
    updatedAt: model.updatedAt === null ? null : iso(model.updatedAt),
    profiles,
  };
}

/** The display name of each model id a page names (the id itself once it is not listed). */
export async function modelLabels(env: Env): Promise<(id: string) => string> {
  const catalogue = await loadCatalogue(env);
  return (id) => catalogue.models.get(id)?.displayName ?? id;
}

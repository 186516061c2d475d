import type { PriceTable } from "@parley/billing";
import { type CatalogueVars, configCatalogue } from "../assistants/catalogue-config.ts";

const tables = new Map<string, PriceTable>();

/**
 * The price table of the configured model catalogue (assistants/catalogue-config.ts: the single
 * place the platform's models and prices live since 2026-12-06; the operator's edits in D1 are
 * read per turn by assistants/resolve.ts). Every listed model has its row; any other model is
 * priced as the platform default model. Made once per configuration.
 */
export function priceTable(vars: CatalogueVars): PriceTable {
  const key = JSON.stringify([vars.MODEL_ID, vars.CATALOGUE_DEV_MODELS, vars.MODEL_CATALOGUE]);
  let table = tables.get(key);
  if (!table) {
    const models = configCatalogue(vars);
    const fallback = models.find((model) => model.id === vars.MODEL_ID);
    if (!fallback) throw new Error(`the platform default model ${vars.MODEL_ID} is not listed`);
    table = {
      models: Object.fromEntries(models.map((model) => [model.id, model.price])),
      default: fallback.price,
    };
    tables.set(key, table);
  }
  return table;
}

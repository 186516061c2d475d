import type { Catalogue } from "./catalogue.ts";
import type { CatalogueModel } from "./catalogue-model.ts";

/**
 * The models an org's members may use (D1 `org_models`, chosen by its owners and admins). An org
 * that never chose has the platform's default set: the platform default model alone
 * (docs/2026-12-06-assistant-profiles.md says why not more: a model costs the org nothing until
 * its owners say so). Retired models and ids the catalogue no longer lists are left out.
 */
export interface AllowedModels {
  models: CatalogueModel[];
  /** false: the org never chose (the default set). */
  chosen: boolean;
}

/** The ids the org listed, in order, as stored (a JSON array from `json_group_array`). */
export function allowedFrom(catalogue: Catalogue, listed: readonly string[]): AllowedModels {
  const chosen = listed.length > 0;
  const ids = chosen ? listed : [catalogue.defaultModel];
  const models = ids.flatMap((id) => {
    const model = catalogue.models.get(id);
    return model && !model.retired ? [model] : [];
  });
  return { models, chosen };
}

/** The org's listed ids, in order. */
export async function listedModels(db: D1Database, orgId: string): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT model_id FROM org_models WHERE org_id = ? ORDER BY position")
    .bind(orgId)
    .all<{ model_id: string }>();
  return results.map((row) => row.model_id);
}

export async function allowedModels(
  db: D1Database,
  catalogue: Catalogue,
  orgId: string,
): Promise<AllowedModels> {
  return allowedFrom(catalogue, await listedModels(db, orgId));
}

/** Why `modelId` cannot be chosen in the org (the message a 400 carries), or null. */
export function modelProblem(
  catalogue: Catalogue,
  allowed: AllowedModels,
  modelId: string,
): string | null {
  const model = catalogue.models.get(modelId);
  if (!model) return `${modelId} is not a model of the catalogue`;
  if (model.retired) return `${modelId} is retired and can no longer be chosen`;
  if (!allowed.models.some((m) => m.id === modelId)) {
    return `${modelId} is not allowed in this organization (owners and admins choose its models)`;
  }
  return null;
}

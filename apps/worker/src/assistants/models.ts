import { AppError } from "@parley/shared";
import { allowedModels, modelProblem } from "./allowed.ts";
import { loadCatalogue } from "./catalogue.ts";

/**
 * A model a member names (a session's pick): one the org allows, live in the catalogue. Throws
 * `invalid_request` naming the field otherwise, before anything is written.
 */
export async function checkChosenModel(
  env: Env,
  orgId: string,
  modelId: string,
  field = "model",
): Promise<void> {
  const catalogue = await loadCatalogue(env);
  const problem = modelProblem(catalogue, await allowedModels(env.DB, catalogue, orgId), modelId);
  if (problem) throw new AppError("invalid_request", `${field}: ${problem}`, { field });
}

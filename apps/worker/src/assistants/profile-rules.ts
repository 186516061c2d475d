import { AppError, TEMPERATURE_RANGE, TOP_P_RANGE, toolNameCollision } from "@parley/shared";
import { allowedModels, modelProblem } from "./allowed.ts";
import type { Catalogue } from "./catalogue.ts";
import type { ProfileContent } from "./profiles-db.ts";
import { toolRegistry } from "./tools.ts";

const refuse = (field: string, message: string) =>
  new AppError("invalid_request", `${field}: ${message}`, { field });

/**
 * The rules a profile's content must keep in its org, checked before any version is written:
 * the model is in the catalogue, live and allowed for the org (a free-preview one when the profile
 * runs an onboarding preview); temperature and top-p within the model's ranges; the reply length
 * within the model's maximum; every tool known to the registry. Throws `invalid_request` naming
 * the field; `conflict` (409, naming the field) for a source's tool the model could not be given
 * under a name of its own (a built-in's, or another switched-on source tool's: no shadowing).
 */
export async function checkProfileContent(
  db: D1Database,
  catalogue: Catalogue,
  orgId: string,
  content: ProfileContent,
  options: { preview: boolean },
): Promise<void> {
  const problem = modelProblem(catalogue, await allowedModels(db, catalogue, orgId), content.model);
  if (problem) throw refuse("model", problem);
  const model = catalogue.models.get(content.model);
  if (!model) throw refuse("model", `${content.model} is not a model of the catalogue`);
  if (options.preview && !model.freePreview) {
    throw refuse(
      "model",
      `${model.id} is not a free-preview model, and this profile runs an onboarding preview`,
    );
  }
  const temperature = model.temperature ?? TEMPERATURE_RANGE;
  if (
    content.temperature !== null &&
    (content.temperature < temperature.min || content.temperature > temperature.max)
  ) {
    throw refuse(
      "temperature",
      `${model.displayName} takes a temperature from ${temperature.min} to ${temperature.max}`,
    );
  }
  const topP = model.topP ?? TOP_P_RANGE;
  if (content.topP !== null && (content.topP < topP.min || content.topP > topP.max)) {
    throw refuse("topP", `${model.displayName} takes a top-p from ${topP.min} to ${topP.max}`);
  }
  if (content.maxOutputTokens !== null && content.maxOutputTokens > model.maxOutputTokens) {
    throw refuse(
      "maxOutputTokens",
      `${model.displayName} writes at most ${model.maxOutputTokens} tokens`,
    );
  }
  const known = new Set((await toolRegistry(db, orgId)).map((tool) => tool.name));
  const unknown = content.tools.findIndex((name) => !known.has(name));
  if (unknown >= 0) {
    throw refuse(
      `tools.${unknown}`,
      `no tool named ${content.tools[unknown]} in this organization`,
    );
  }
  const collision = toolNameCollision(content.tools);
  if (collision) {
    throw new AppError(
      "conflict",
      `tools.${collision.index}: ${collision.name} would reach the model as ${collision.modelName}, the name of ${collision.with}; switch one of them off`,
      { field: `tools.${collision.index}` },
    );
  }
}

/** Checks a model may run an org's onboarding preview (a profile assigned to one). */
export function checkPreviewModel(catalogue: Catalogue, modelId: string, field: string): void {
  const model = catalogue.models.get(modelId);
  if (!model?.freePreview || model.retired) {
    throw refuse(
      field,
      `the profile's model ${modelId} is not a free-preview model: the onboarding preview can use only those`,
    );
  }
}

import {
  AppError,
  type CatalogueEntry,
  catalogueEntrySchema,
  type OperatorModelList,
  operatorModelListSchema,
  operatorModelSchema,
  retireModelSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { forgetCatalogue, loadCatalogue, toOperatorModel } from "../assistants/catalogue.ts";
import { catalogueModelOf } from "../assistants/catalogue-config.ts";
import type { CatalogueModel } from "../assistants/catalogue-model.ts";
import { auditStatement } from "../db/audit.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";
import { requireOperator } from "./operator.ts";

/** How many live profiles name each model (their current version), for the operator's list. */
async function profileCounts(db: D1Database): Promise<Map<string, number>> {
  const { results } = await db
    .prepare(
      `SELECT v.model, COUNT(*) AS n FROM assistant_profiles p
       JOIN assistant_profile_versions v ON v.profile_id = p.id AND v.version = p.current_version
       GROUP BY v.model`,
    )
    .all<{ model: string; n: number }>();
  return new Map(results.map((row) => [row.model, row.n]));
}

/** A catalogue entry back in the operator's shape (to store a configured one retired). */
const entryOf = (model: CatalogueModel): CatalogueEntry => ({
  id: model.id,
  provider: model.provider,
  displayName: model.displayName,
  contextWindow: model.contextWindow,
  maxOutputTokens: model.maxOutputTokens,
  capabilities: model.capabilities,
  freePreview: model.freePreview,
  temperature: model.temperature,
  topP: model.topP,
  pricing: model.pricing,
});

async function writeEntry(
  env: Env,
  entry: CatalogueEntry,
  retiredAt: number | null,
  now: number,
): Promise<void> {
  const { retired: _retired, ...stored } = entry;
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO catalogue_models (id, entry, retired_at, updated_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (id) DO UPDATE SET entry = ?2, retired_at = ?3, updated_at = ?4`,
    ).bind(entry.id, JSON.stringify(stored), retiredAt, now),
    auditStatement(
      env.DB,
      {
        orgId: null,
        actorId: null,
        action: retiredAt === null ? "catalogue.model_saved" : "catalogue.model_retired",
        subjectType: "model",
        subjectId: entry.id,
        data: { operator: true },
      },
      { now },
    ),
  ]);
  // This isolate reads it at once; others within CATALOGUE_CACHE_MS.
  forgetCatalogue();
}

async function shown(env: Env, id: string) {
  const catalogue = await loadCatalogue(env);
  const model = catalogue.models.get(id);
  if (!model) throw new AppError("not_found", "Model not found");
  return toOperatorModel(model, (await profileCounts(env.DB)).get(id) ?? 0);
}

/**
 * The platform operator's catalogue (under /api/operator/models, `OPERATOR_SECRET`): list every
 * model, retired ones too, with where it is served and the NAME of its key's secret; add or
 * change one (prices in OpenRouter's published shape, refused unless they convert exactly to
 * micro-dollars per million tokens); retire one. The platform default model cannot be retired.
 */
export const operatorModels = new Hono<AppEnv>()
  .use("*", requireOperator)
  .get(
    "/",
    describeRoute({
      tags: ["Operator"],
      summary: "The model catalogue, retired models included (platform operator)",
      security: security.operator,
      responses: { 200: json(operatorModelListSchema), ...errors(401) },
    }),
    async (c) => {
      const [catalogue, counts] = await Promise.all([
        loadCatalogue(c.env),
        profileCounts(c.env.DB),
      ]);
      return c.json({
        items: [...catalogue.models.values()].map((model) =>
          toOperatorModel(model, counts.get(model.id) ?? 0),
        ),
        defaultModel: catalogue.defaultModel,
      } satisfies OperatorModelList);
    },
  )

  /**
   * Adds or replaces a model by id (over the configured entry, if any). `retired` absent keeps
   * whether it is retired (a new model is live); `true` retires it, `false` brings it back.
   */
  .put(
    "/",
    describeRoute({
      tags: ["Operator"],
      summary: "Add or change a catalogue model (platform operator)",
      security: security.operator,
      responses: { 200: json(operatorModelSchema), ...errors(400, 401, 409) },
    }),
    jsonBody(catalogueEntrySchema),
    async (c) => {
      const entry = c.req.valid("json");
      const checked = catalogueModelOf(entry, "operator");
      if ("error" in checked) {
        throw new AppError("invalid_request", checked.error, { field: checked.field });
      }
      const catalogue = await loadCatalogue(c.env);
      const current = catalogue.models.get(entry.id);
      const now = Date.now();
      const retiredAt =
        entry.retired === undefined
          ? (current?.retiredAt ?? (current?.retired ? now : null))
          : entry.retired
            ? (current?.retiredAt ?? now)
            : null;
      if (retiredAt !== null && entry.id === catalogue.defaultModel) {
        throw new AppError("conflict", "The platform default model (MODEL_ID) cannot be retired");
      }
      await writeEntry(c.env, entry, retiredAt, now);
      return c.json(await shown(c.env, entry.id));
    },
  )

  /**
   * Retires a model: it is no longer offered, and no org, profile or session can newly choose
   * it; a profile or session that names it is refused its next turn with a message saying so
   * (never moved to another model). Retiring a retired model changes nothing.
   */
  .post(
    "/retire",
    describeRoute({
      tags: ["Operator"],
      summary: "Retire a catalogue model (platform operator)",
      security: security.operator,
      responses: { 200: json(operatorModelSchema), ...errors(400, 401, 404, 409) },
    }),
    jsonBody(retireModelSchema),
    async (c) => {
      const { id } = c.req.valid("json");
      const catalogue = await loadCatalogue(c.env);
      const model = catalogue.models.get(id);
      if (!model) throw new AppError("not_found", "Model not found");
      if (id === catalogue.defaultModel) {
        throw new AppError("conflict", "The platform default model (MODEL_ID) cannot be retired");
      }
      if (!model.retired) await writeEntry(c.env, entryOf(model), Date.now(), Date.now());
      return c.json(await shown(c.env, id));
    },
  );

import { AppError, importOpenApiSchema, openApiImportResultSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { assistantChanged } from "../assistants/push.ts";
import { requireRole } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";
import { importOpenApi } from "../tools/openapi-import.ts";
import { storedActions } from "../tools/sources-db.ts";
import { reread, shown, sourceAccess } from "./tool-source-access.ts";

/**
 * An OpenAPI 3.x document imported as an HTTP source's actions (/api/tool-sources/:id/import-openapi,
 * docs/2026-12-06-tools.md): owners and admins; another org's source is 404.
 */
export const toolSourceImport = new Hono<AppEnv>().post(
  "/:id/import-openapi",
  describeRoute({
    tags: ["Tools"],
    summary: "Replace an HTTP source's actions with an OpenAPI 3.x document's operations",
    responses: { 200: json(openApiImportResultSchema), ...errors(400, 401, 403, 404, 409, 413) },
  }),
  // Its own body limit (MAX_OPENAPI_BYTES, app.ts): a real API's document outgrows 64 KiB.
  jsonBody(importOpenApiSchema),
  async (c) => {
    const { userId } = c.get("caller");
    const db = c.env.DB;
    const { row, access } = await sourceAccess(db, userId, c.req.param("id"));
    requireRole(access, "admin");
    if (row.kind !== "http") {
      throw new AppError("invalid_request", "Only an HTTP source takes an OpenAPI document");
    }
    const imported = importOpenApi(c.req.valid("json").document);
    if ("error" in imported) {
      throw new AppError("invalid_request", imported.error, { field: "document" });
    }
    const now = Date.now();
    const results = await db.batch([
      db
        .prepare("UPDATE tool_sources SET tools = ?, updated_at = ? WHERE id = ? AND version = ?")
        .bind(JSON.stringify(storedActions(imported.actions)), now, row.id, row.version),
      auditStatement(
        db,
        {
          orgId: row.org_id,
          actorId: userId,
          action: "tool_source.imported",
          subjectType: "tool_source",
          subjectId: row.id,
          data: { actions: imported.actions.length, skipped: imported.skipped.length },
        },
        { now, afterChange: true },
      ),
    ]);
    if (results[0]?.meta.changes !== 1) {
      throw new AppError("conflict", "The source changed meanwhile; try again");
    }
    await assistantChanged(c.env, { orgId: row.org_id }).catch(() => undefined);
    return c.json({
      source: shown(c.env, await reread(db, row.id), access.role),
      imported: imported.actions.length,
      skipped: imported.skipped,
    });
  },
);

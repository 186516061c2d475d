import {
  AppError,
  type CreateToolSource,
  createToolSourceSchema,
  newId,
  pageQuerySchema,
  toolSourceListSchema,
  toolSourceSchema,
  updateToolSourceSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { assistantChanged } from "../assistants/push.ts";
import { orgAccess, requireRole } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, noBody, query } from "../http/validate.ts";
import { sealCredential } from "../tools/credential.ts";
import { type ListOutcome, sourceClient } from "../tools/source-client.ts";
import {
  recordListing,
  SOURCE_COLUMNS,
  type SourceRow,
  sourceRef,
  storedActions,
} from "../tools/sources-db.ts";
import {
  refuseCredentialCarry,
  refuseUrl,
  reread,
  shown,
  sourceAccess,
} from "./tool-source-access.ts";

/**
 * An org's tool sources (docs/2026-12-06-tools.md): remote MCP servers and HTTP actions. Every
 * member reads them (a profile's tools are named after them); owners and admins register, change,
 * refresh and delete them. Another org's source is a missing one (404) everywhere. A source's
 * credential is stored sealed and never returned.
 */

/**
 * Lists an MCP source's tools now and records them (`recordListing`); the source's listener
 * stays open for its `list_changed`. Acts as the source, never as the admin who asked.
 */
async function listNow(env: Env, row: SourceRow): Promise<void> {
  if (row.kind !== "mcp") return;
  // Typed as the object's method says (the RPC stub's type loses the union's narrowing).
  const listed = (await sourceClient(env, row.id).listTools({
    source: sourceRef(row),
  })) as ListOutcome;
  await recordListing(env.DB, row.id, listed);
}

/** Profiles (current versions) of the org that switch on a tool of this source. */
const USING_PROFILES = `SELECT v.name FROM assistant_profiles p
  JOIN assistant_profile_versions v ON v.profile_id = p.id AND v.version = p.current_version
  WHERE p.org_id = ?1 AND EXISTS (SELECT 1 FROM json_each(v.tools) t
    WHERE substr(t.value, 1, length('source:' || ?2 || ':')) = 'source:' || ?2 || ':')`;

/** Sources of an org (under /api/orgs). */
export const orgToolSources = new Hono<AppEnv>()
  .get(
    "/:orgId/tool-sources",
    describeRoute({
      tags: ["Tools"],
      summary: "The org's tool sources (MCP servers and HTTP actions)",
      responses: { 200: json(toolSourceListSchema), ...errors(400, 401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const db = c.env.DB;
      const access = await orgAccess(db, c.get("caller").userId, c.req.param("orgId"));
      const page = await idPage(
        db,
        {
          select: `SELECT ${SOURCE_COLUMNS} FROM tool_sources`,
          where: "org_id = ?",
          binds: [access.orgId],
        },
        c.req.valid("query"),
        (row: SourceRow) => shown(c.env, row, access.role),
      );
      return c.json(page);
    },
  )

  .post(
    "/:orgId/tool-sources",
    describeRoute({
      tags: ["Tools"],
      summary: "Register a tool source (an MCP server's tools are listed at once)",
      responses: { 201: json(toolSourceSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(createToolSourceSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const input: CreateToolSource = c.req.valid("json");
      refuseUrl(input.url, c.env);
      const now = Date.now();
      const id = newId("toolSource", now);
      const sealed = input.credential
        ? await sealCredential(c.env, id, input.credential.value)
        : null;
      const tools = input.kind === "http" ? storedActions(input.actions) : [];
      const overrides = input.kind === "mcp" ? input.access : {};
      const results = await db.batch([
        db
          .prepare(
            `INSERT INTO tool_sources (id, org_id, kind, name, description, url, price_micros,
               credential_header, credential_sealed, access_overrides, tools, created_by,
               created_at, updated_at)
             SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
             WHERE NOT EXISTS (SELECT 1 FROM tool_sources WHERE org_id = ? AND name = ?)`,
          )
          .bind(
            id,
            access.orgId,
            input.kind,
            input.name,
            input.description,
            new URL(input.url).href,
            input.priceMicros,
            input.credential?.header ?? null,
            sealed,
            JSON.stringify(overrides),
            JSON.stringify(tools),
            userId,
            now,
            now,
            access.orgId,
            input.name,
          ),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "tool_source.created",
            subjectType: "tool_source",
            subjectId: id,
            data: { kind: input.kind, priceMicros: input.priceMicros },
          },
          { now, afterChange: true },
        ),
      ]);
      if (results[0]?.meta.changes !== 1) {
        throw new AppError("conflict", "A tool source of this organization has this name", {
          field: "name",
        });
      }
      const row = await reread(db, id);
      await listNow(c.env, row);
      return c.json(shown(c.env, await reread(db, id), access.role), 201);
    },
  );

/**
 * One source (/api/tool-sources/:id). Its OpenAPI import is tool-source-import.ts; a session's
 * tool calls (/api/sessions/:id/tool-calls) are tool-calls.ts.
 */
export const toolSources = new Hono<AppEnv>()
  .get(
    "/:id",
    describeRoute({
      tags: ["Tools"],
      summary: "A tool source with its tools and health",
      responses: { 200: json(toolSourceSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { row, access } = await sourceAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("id"),
      );
      return c.json(shown(c.env, row, access.role));
    },
  )

  .patch(
    "/:id",
    describeRoute({
      tags: ["Tools"],
      summary: "Change a tool source (its credential is replaced, never shown)",
      responses: { 200: json(toolSourceSchema), ...errors(400, 401, 403, 404, 409) },
    }),
    jsonBody(updateToolSourceSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { row, access } = await sourceAccess(db, userId, c.req.param("id"));
      requireRole(access, "admin");
      const input = c.req.valid("json");
      if (input.actions !== undefined && row.kind !== "http") {
        throw new AppError("invalid_request", "actions: only an HTTP source has actions", {
          field: "actions",
        });
      }
      if (input.access !== undefined && row.kind !== "mcp") {
        throw new AppError("invalid_request", "access: HTTP actions say read or write each", {
          field: "access",
        });
      }
      if (input.url !== undefined) refuseUrl(input.url, c.env);
      refuseCredentialCarry(row, input);
      // Switching a source off or on moves its version too: calls made under the older one
      // (a turn built before the switch) are refused by its client object.
      const connection =
        input.url !== undefined || input.credential !== undefined || input.enabled !== undefined;
      const sealed =
        input.credential === undefined || input.credential === null
          ? null
          : await sealCredential(c.env, row.id, input.credential.value);
      const now = Date.now();
      const results = await db.batch([
        db
          .prepare(
            `UPDATE tool_sources SET
               name = coalesce(?1, name),
               description = CASE WHEN ?2 THEN ?3 ELSE description END,
               price_micros = coalesce(?4, price_micros),
               url = coalesce(?5, url),
               credential_header = CASE WHEN ?6 THEN ?7 ELSE credential_header END,
               credential_sealed = CASE WHEN ?6 THEN ?8 ELSE credential_sealed END,
               access_overrides = coalesce(?9, access_overrides),
               tools = coalesce(?10, tools),
               enabled = coalesce(?16, enabled),
               version = version + ?11,
               updated_at = ?12
             WHERE id = ?13 AND version = ?14
               AND NOT EXISTS (SELECT 1 FROM tool_sources WHERE org_id = ?15 AND name = ?1 AND id != ?13)`,
          )
          .bind(
            input.name ?? null,
            input.description !== undefined ? 1 : 0,
            input.description ?? null,
            input.priceMicros ?? null,
            input.url === undefined ? null : new URL(input.url).href,
            input.credential !== undefined ? 1 : 0,
            input.credential?.header ?? null,
            sealed,
            input.access === undefined ? null : JSON.stringify(input.access),
            input.actions === undefined ? null : JSON.stringify(storedActions(input.actions)),
            connection ? 1 : 0,
            now,
            row.id,
            row.version,
            row.org_id,
            input.enabled === undefined ? null : input.enabled ? 1 : 0,
          ),
        auditStatement(
          db,
          {
            orgId: row.org_id,
            actorId: userId,
            action: "tool_source.updated",
            subjectType: "tool_source",
            subjectId: row.id,
            data: { connection, fields: Object.keys(input).sort().join(",") },
          },
          { now, afterChange: true },
        ),
      ]);
      if (results[0]?.meta.changes !== 1) {
        throw new AppError("conflict", "The source changed meanwhile, or another has this name");
      }
      if (connection) await sourceClient(c.env, row.id).retire(row.version + 1);
      let updated = await reread(db, row.id);
      if (connection && updated.kind === "mcp" && updated.enabled === 1) {
        await listNow(c.env, updated);
        updated = await reread(db, row.id);
      }
      // Profiles naming its tools see the change at their next turn.
      await assistantChanged(c.env, { orgId: row.org_id }).catch(() => undefined);
      return c.json(shown(c.env, updated, access.role));
    },
  )

  .delete(
    "/:id",
    describeRoute({
      tags: ["Tools"],
      summary: "Delete a tool source (409 while a profile switches on one of its tools)",
      responses: { 204: empty(), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { row, access } = await sourceAccess(db, userId, c.req.param("id"));
      requireRole(access, "admin");
      const using = await db
        .prepare(USING_PROFILES)
        .bind(row.org_id, row.id)
        .all<{ name: string }>();
      if (using.results.length > 0) {
        throw new AppError(
          "conflict",
          `Profiles switch on tools of this source: ${using.results.map((r) => r.name).join(", ")}. Switch them off first.`,
        );
      }
      const now = Date.now();
      const results = await db.batch([
        // The check again in the delete's own statement: a profile switching a tool on in
        // between makes it delete nothing (409 below).
        db
          .prepare(`DELETE FROM tool_sources WHERE id = ?2 AND NOT EXISTS (${USING_PROFILES})`)
          .bind(row.org_id, row.id),
        auditStatement(
          db,
          {
            orgId: row.org_id,
            actorId: userId,
            action: "tool_source.deleted",
            subjectType: "tool_source",
            subjectId: row.id,
          },
          { now, afterChange: true },
        ),
      ]);
      if (results[0]?.meta.changes !== 1) {
        throw new AppError("conflict", "A profile switched on a tool of this source meanwhile");
      }
      // Calls made under it from now on are refused; its connection closes.
      await sourceClient(c.env, row.id).retire(Number.MAX_SAFE_INTEGER);
      return c.body(null, 204);
    },
  )

  .post(
    "/:id/refresh",
    describeRoute({
      tags: ["Tools"],
      summary: "List an MCP source's tools again",
      responses: { 200: json(toolSourceSchema), ...errors(400, 401, 403, 404) },
    }),
    noBody,
    async (c) => {
      const { userId } = c.get("caller");
      const { row, access } = await sourceAccess(c.env.DB, userId, c.req.param("id"));
      requireRole(access, "admin");
      if (row.kind !== "mcp") {
        throw new AppError("invalid_request", "An HTTP source's actions are written, not listed");
      }
      refuseUrl(row.url, c.env);
      await listNow(c.env, row);
      return c.json(shown(c.env, await reread(c.env.DB, row.id), access.role));
    },
  );

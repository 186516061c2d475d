import {
  AppError,
  dataExportPageSchema,
  dataExportSchema,
  type PageQuery,
  pageQuerySchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound, orgAccess, requireRole } from "../auth/access.ts";
import { constantTimeEqual, sha256Base64Url } from "../auth/encoding.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage } from "../db/pagination.ts";
import {
  downloadable,
  exportJob,
  exportRow,
  fileExport,
  holderStands,
  startExport,
  toDataExport,
} from "../exports/file.ts";
import type { ExportRow } from "../exports/sections.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { noBody, query } from "../http/validate.ts";

/**
 * Data exports (GDPR Art. 15 and 20; docs/2026-12-02-data-export.md). A person exports their own
 * account; an org's owners export the org (admins and members get 403, another org 404). The job
 * runs in its own object; the answer is 202 with its progress, and the finished export carries a
 * download link (its secret seen only by whoever asked) good for 24 hours.
 */

/** A page of the exports `filter` picks, newest first, each with the link `base` gives it. */
async function page(
  env: Env,
  filter: { where: string; binds: unknown[] },
  at: PageQuery,
  base: (row: ExportRow) => string | null,
) {
  const rows = await idPage<ExportRow>(
    env.DB,
    { select: "SELECT * FROM data_exports", ...filter },
    at,
  );
  return {
    ...rows,
    items: await Promise.all(rows.items.map((row) => toDataExport(env, row, base(row)))),
  };
}

export const meExports = new Hono<AppEnv>()
  .post(
    "/",
    describeRoute({
      tags: ["Exports"],
      summary: "Export my data (GDPR Art. 15 and 20)",
      responses: { 202: json(dataExportSchema, "The job, with its progress"), ...errors(401, 409) },
    }),
    noBody,
    async (c) => {
      const { userId } = c.get("caller");
      const base = publicBase(c, "Data export links");
      const filed = await fileExport(c.env, {
        kind: "account",
        subjectUserId: userId,
        orgId: null,
        requestedBy: userId,
      });
      return c.json(await toDataExport(c.env, await startExport(c.env, filed.id), base), 202);
    },
  )
  .get(
    "/",
    describeRoute({
      tags: ["Exports"],
      summary: "My data exports, newest first",
      responses: { 200: json(dataExportPageSchema), ...errors(400, 401) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const base = publicBase(c, "Data export links");
      return c.json(
        await page(
          c.env,
          { where: "kind = 'account' AND subject_user_id = ?", binds: [userId] },
          c.req.valid("query"),
          () => base,
        ),
      );
    },
  )
  .get(
    "/:exportId",
    describeRoute({
      tags: ["Exports"],
      summary: "One of my data exports",
      responses: { 200: json(dataExportSchema), ...errors(401, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const row = await exportRow(c.env, c.req.param("exportId"));
      if (row?.kind !== "account" || row.subject_user_id !== userId) throw notFound("Export");
      return c.json(await toDataExport(c.env, row, publicBase(c, "Data export links")));
    },
  );

export const orgExports = new Hono<AppEnv>()
  .post(
    "/:orgId/exports",
    describeRoute({
      tags: ["Exports"],
      summary: "Export the org's data (owners)",
      responses: {
        202: json(dataExportSchema, "The job, with its progress"),
        ...errors(401, 403, 404, 409),
      },
    }),
    noBody,
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      requireRole(access, "owner");
      const base = publicBase(c, "Data export links");
      const filed = await fileExport(c.env, {
        kind: "org",
        subjectUserId: userId,
        orgId: access.orgId,
        requestedBy: userId,
      });
      return c.json(await toDataExport(c.env, await startExport(c.env, filed.id), base), 202);
    },
  )
  .get(
    "/:orgId/exports",
    describeRoute({
      tags: ["Exports"],
      summary: "The org's data exports (owners)",
      responses: { 200: json(dataExportPageSchema), ...errors(400, 401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      requireRole(access, "owner");
      const base = publicBase(c, "Data export links");
      return c.json(
        await page(
          c.env,
          { where: "kind = 'org' AND org_id = ?", binds: [access.orgId] },
          c.req.valid("query"),
          // Another owner's link is theirs.
          (row) => (row.requested_by === userId ? base : null),
        ),
      );
    },
  )
  .get(
    "/:orgId/exports/:exportId",
    describeRoute({
      tags: ["Exports"],
      summary: "One of the org's data exports (owners)",
      responses: { 200: json(dataExportSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      requireRole(access, "owner");
      const row = await exportRow(c.env, c.req.param("exportId"));
      if (row?.kind !== "org" || row.org_id !== access.orgId) throw notFound("Export");
      const base = row.requested_by === userId ? publicBase(c, "Data export links") : null;
      return c.json(await toDataExport(c.env, row, base));
    },
  );

/**
 * The archive, by its link (no sign-in: the secret is the capability, like an invitation link).
 * A wrong or missing key is 404, as for an unknown export, and so is the right key once the person
 * it was issued to no longer stands where it needs them (`holderStands`); the right key after the
 * link expired is 410. Streamed from the export's object a page at a time, never cached, never referred.
 */
export const exportDownloads = new Hono<AppEnv>().get(
  "/:exportId/download",
  describeRoute({
    tags: ["Exports"],
    summary: "Download an export's archive by its link",
    description: "The `key` of the link is the capability: no sign-in. 410 once it expired.",
    security: security.public,
    responses: {
      200: { description: "The archive: one JSON document (`format`, `version`, sections)" },
      ...errors(404, 410),
    },
  }),
  async (c) => {
    const row = await exportRow(c.env, c.req.param("exportId"));
    const key = c.req.query("key") ?? "";
    if (!row?.secret_hash || key.length < 16 || key.length > 100) throw notFound("Export");
    const presented = new TextEncoder().encode(await sha256Base64Url(key));
    if (!constantTimeEqual(presented, new TextEncoder().encode(row.secret_hash))) {
      throw notFound("Export");
    }
    // A link whose holder lost the standing it needs is dead: it answers as a missing one and
    // writes nothing (no audit row), whatever else is true of it.
    if (!(await holderStands(c.env, row))) throw notFound("Export");
    if (!downloadable(row)) throw new AppError("gone", "This download link has expired");
    await auditStatement(c.env.DB, {
      orgId: row.org_id,
      actorId: null,
      action: "export.downloaded",
      subjectType: "data_export",
      subjectId: row.id,
      data: { kind: row.kind, sizeBytes: row.size_bytes },
    }).run();
    const job = exportJob(c.env, row.id);
    let after = -1;
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await job.page(after);
        if (next.text) controller.enqueue(encoder.encode(next.text));
        if (next.next === null) controller.close();
        else after = next.next;
      },
    });
    return new Response(body, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "content-disposition": `attachment; filename="parley-${row.kind}-export-${row.id}.json"`,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
      },
    });
  },
);

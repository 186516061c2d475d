import { citedPassageQuerySchema, citedPassageSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound } from "../auth/access.ts";
import { errors, json, security } from "../http/openapi.ts";
import { query } from "../http/validate.ts";
import { citedPassage } from "../knowledge/cited-passage.ts";
import { type EndUserEnv, requireEndUser } from "./end-user-sessions.ts";

/**
 * What an end user reads of the knowledge (docs/2026-12-06-knowledge.md, "Sources"): one cited
 * passage, opened from a reply's sources in the embed. Only a document of one of their app's live
 * projects, in their org; anything else is 404 like a missing one. The passage alone: the
 * assistant quotes passages to them anyway, the whole document is the org's to publish or not.
 */
export const endUserDocuments = new Hono<EndUserEnv>().get(
  "/documents/:documentId/passages/:chunkId",
  describeRoute({
    tags: ["Embed"],
    summary: "A passage a reply cited, from a document of the app's projects",
    security: security.endUser,
    responses: { 200: json(citedPassageSchema), ...errors(400, 401, 404, 410) },
  }),
  requireEndUser,
  query(citedPassageQuerySchema),
  async (c) => {
    const who = c.get("endUser");
    const document = await c.env.DB.prepare(
      `SELECT d.id, d.project_id FROM knowledge_documents d
       JOIN app_projects ap ON ap.project_id = d.project_id AND ap.app_id = ?2
       JOIN projects p ON p.id = d.project_id AND p.deleted_at IS NULL AND p.org_id = ?3
       WHERE d.id = ?1 AND d.org_id = ?3`,
    )
      .bind(c.req.param("documentId"), who.appId, who.orgId)
      .first<{ id: string; project_id: string }>();
    if (!document) throw notFound("Document");
    const { version } = c.req.valid("query");
    return c.json(
      await citedPassage(
        c.env,
        { id: document.id, projectId: document.project_id },
        c.req.param("chunkId"),
        version,
      ),
    );
  },
);

import {
  type EndUserToolCall,
  endUserToolCallListSchema,
  pageQuerySchema,
  type ToolAccess,
  type ToolCallStatus,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { endUserSessionAccess } from "../auth/end-user-access.ts";
import { idPage, iso } from "../db/pagination.ts";
import { errors, json, security } from "../http/openapi.ts";
import { query } from "../http/validate.ts";
import { type EndUserEnv, requireEndUser } from "./end-user-sessions.ts";

/**
 * An end user's own tool calls in one of their sessions (issue 30, docs/2026-12-06-tools.md, "An
 * end user's calls"), under `/api/embed` with an end-user access token: what the assistant did in
 * the tenant's product for them, each call as the embed's "actions taken" list shows it. Another
 * end user's session, a member's, another app's or org's is 404 (`endUserSessionAccess`), and
 * only calls made as this end user are listed. Never arguments or results (the transcript has
 * them), nor anyone's ids.
 */

interface Row {
  id: string;
  tool_name: string;
  source_name: string | null;
  access: ToolAccess;
  approved_by: string | null;
  status: ToolCallStatus;
  error_code: string | null;
  duration_ms: number;
  price_micros: number;
}

export const endUserToolCalls = new Hono<EndUserEnv>().get(
  "/sessions/:sessionId/tool-calls",
  describeRoute({
    tags: ["Embed"],
    summary: "The tool calls made for them in one of their sessions, newest first",
    security: security.endUser,
    responses: { 200: json(endUserToolCallListSchema), ...errors(400, 401, 404) },
  }),
  requireEndUser,
  query(pageQuerySchema),
  async (c) => {
    const who = c.get("endUser");
    const { session } = await endUserSessionAccess(c.env.DB, who, c.req.param("sessionId"));
    const page = await idPage(
      c.env.DB,
      {
        select: `SELECT t.id, t.tool_name, s.name AS source_name, t.access, t.approved_by, t.status,
           t.error_code, t.duration_ms, t.price_micros, t.created_at
         FROM tool_calls t LEFT JOIN tool_sources s ON s.id = t.source_id AND s.org_id = t.org_id`,
        where:
          "t.session_id = ? AND t.org_id = ? AND t.caller_kind = 'end_user' AND t.caller_id = ?",
        binds: [session.id, who.orgId, who.endUserId],
        id: "t.id",
      },
      c.req.valid("query"),
      (row: Row & { created_at: number }): EndUserToolCall => ({
        id: row.id,
        toolName: row.tool_name,
        sourceName: row.source_name,
        access: row.access,
        approved: row.approved_by !== null,
        status: row.status,
        errorCode: row.error_code,
        durationMs: row.duration_ms,
        // As the session's spend: an app that hides cost shows its end users no price.
        priceMicros: who.showCost ? row.price_micros : 0,
        createdAt: iso(row.created_at),
      }),
    );
    return c.json(page);
  },
);

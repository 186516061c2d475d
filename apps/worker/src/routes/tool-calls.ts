import { pageQuerySchema, toolCallListSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { sessionAccess } from "../auth/access.ts";
import { idPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { query } from "../http/validate.ts";
import { CALL_COLUMNS, type CallRow, toToolCall } from "../tools/sources-db.ts";

/** A session's tool calls, newest first (under /api/sessions): its owner, or an admin. */
export const sessionToolCalls = new Hono<AppEnv>().get(
  "/:sessionId/tool-calls",
  describeRoute({
    tags: ["Tools"],
    summary: "A session's tool calls, newest first (never their arguments or results)",
    responses: { 200: json(toolCallListSchema), ...errors(400, 401, 404, 410) },
  }),
  query(pageQuerySchema),
  async (c) => {
    const db = c.env.DB;
    const { session } = await sessionAccess(db, c.get("caller").userId, c.req.param("sessionId"));
    const page = await idPage(
      db,
      {
        select: `SELECT ${CALL_COLUMNS} FROM tool_calls`,
        where: "session_id = ?",
        binds: [session.id],
      },
      c.req.valid("query"),
      (row: CallRow) => toToolCall(row),
    );
    return c.json(page);
  },
);

import type { Session } from "@parley/shared";
import { Hono } from "hono";
import { type SessionRow, sessionAccess } from "../auth/access.ts";
import { billingAccount } from "../billing/account.ts";
import { iso } from "../db/pagination.ts";
import { fileErasure } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";

export type SessionRowOut = Omit<SessionRow, "deleted_at">;

export const toSession = (row: SessionRowOut, spendMicros = 0): Session => ({
  id: row.id,
  projectId: row.project_id,
  orgId: row.org_id,
  ownerId: row.owner_id,
  title: row.title,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  lastActivityAt: iso(row.updated_at),
  spendMicros,
});

/** The spend of each session of a page, in one call to the org's BillingAccount. */
export async function sessionSpend(
  env: Env,
  orgId: string,
  ids: string[],
): Promise<Record<string, number>> {
  return ids.length === 0 ? {} : billingAccount(env, orgId).spendBySession(ids);
}

/** One session: its owner, or an admin or owner of its org (routes under /api/sessions). */
export const sessions = new Hono<AppEnv>()

  .get("/:sessionId", async (c) => {
    const { session } = await sessionAccess(
      c.env.DB,
      c.get("caller").userId,
      c.req.param("sessionId"),
    );
    // The same figure as the project's session list: what its model calls cost the org so far.
    const spend = await sessionSpend(c.env, session.org_id, [session.id]);
    return c.json(toSession(session, spend[session.id] ?? 0));
  })

  /**
   * Deletes a session through the erasure path: the D1 mark comes first (the Worker answers 410 and
   * never addresses the object again), then the agent wipes its chat, sockets and alarms.
   */
  .delete("/:sessionId", async (c) => {
    const { userId } = c.get("caller");
    const { session } = await sessionAccess(c.env.DB, userId, c.req.param("sessionId"));
    await fileErasure(c.env, {
      requestedBy: userId,
      orgId: session.org_id,
      subject: { type: "session", id: session.id },
      reason: "session deleted",
      plan: {
        userId: null,
        orgIds: [],
        projectIds: [],
        sessionIds: [session.id],
        deleteOrgIds: [],
        membershipOrgId: null,
      },
    });
    return c.body(null, 204);
  });

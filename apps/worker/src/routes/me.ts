import { AppError, deleteAccountSchema, type Me, type Role } from "@parley/shared";
import { Hono } from "hono";
import { iso } from "../db/pagination.ts";
import { fileErasure, toErasureRequest } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { jsonBody } from "../http/validate.ts";
import { clearRefreshCookie } from "./auth.ts";

export const me = new Hono<AppEnv>()
  .get("/", async (c) => {
    const { userId } = c.get("caller");
    const db = c.env.DB;
    const [users, orgs] = await db.batch([
      db.prepare("SELECT id, email, name, created_at FROM users WHERE id = ?").bind(userId),
      db
        .prepare(
          `SELECT o.id, o.name, m.role, o.created_at FROM memberships m
         JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ? ORDER BY o.id`,
        )
        .bind(userId),
    ]);
    const user = users?.results[0] as
      | { id: string; email: string; name: string; created_at: number }
      | undefined;
    if (!user) throw new AppError("unauthorized", "Invalid or expired access token");
    const rows = (orgs?.results ?? []) as {
      id: string;
      name: string;
      role: Role;
      created_at: number;
    }[];
    return c.json({
      id: user.id,
      email: user.email,
      name: user.name,
      createdAt: iso(user.created_at),
      orgs: rows.map((org) => ({
        id: org.id,
        name: org.name,
        role: org.role,
        createdAt: iso(org.created_at),
      })),
    } satisfies Me);
  })

  /**
   * Self-erasure of the whole account (GDPR Art. 17). Every org membership goes, the member's usage
   * identity is pseudonymized, and an org the user alone belongs to is erased with them. An org they
   * own together with other members is not theirs alone to erase: the request is refused until they
   * hand over ownership or remove the others.
   */
  .delete("/", jsonBody(deleteAccountSchema), async (c) => {
    const { userId } = c.get("caller");
    const db = c.env.DB;
    const { results: memberships } = await db
      .prepare(
        `SELECT m.org_id, m.role, o.name,
           (SELECT COUNT(*) FROM memberships x WHERE x.org_id = m.org_id) AS members,
           (SELECT COUNT(*) FROM memberships x WHERE x.org_id = m.org_id AND x.role = 'owner') AS owners
         FROM memberships m JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ?`,
      )
      .bind(userId)
      .all<{ org_id: string; role: Role; name: string; members: number; owners: number }>();
    const account = await db
      .prepare("SELECT email FROM users WHERE id = ?")
      .bind(userId)
      .first<{ email: string }>();
    const plan = {
      userId,
      email: account?.email ?? null,
      orgIds: memberships.map((m) => m.org_id),
      projectIds: [] as string[],
      sessionIds: [] as string[],
      deleteOrgIds: [] as string[],
      membershipOrgId: null,
    };
    for (const m of memberships) {
      if (m.role === "owner" && m.owners === 1 && m.members > 1) {
        throw new AppError(
          "conflict",
          `You are the only owner of "${m.name}", which has other members: make one of them an owner first`,
        );
      }
      if (m.members === 1) {
        plan.deleteOrgIds.push(m.org_id);
        const { results: projects } = await db
          .prepare("SELECT id FROM projects WHERE org_id = ?")
          .bind(m.org_id)
          .all<{ id: string }>();
        plan.projectIds.push(...projects.map((p) => p.id));
        const { results: sessions } = await db
          .prepare("SELECT id FROM sessions WHERE org_id = ?")
          .bind(m.org_id)
          .all<{ id: string }>();
        plan.sessionIds.push(...sessions.map((s) => s.id));
      } else {
        const { results: sessions } = await db
          .prepare("SELECT id FROM sessions WHERE org_id = ? AND owner_id = ?")
          .bind(m.org_id, userId)
          .all<{ id: string }>();
        plan.sessionIds.push(...sessions.map((s) => s.id));
      }
    }
    // The used shared chats of the orgs that live on (an org erased whole takes its chats along):
    // their messages go, and others' messages naming them are scrubbed.
    const { results: chats } = await db
      .prepare(
        `SELECT DISTINCT p.project_id FROM preview_authors p
         JOIN memberships m ON m.org_id = p.org_id AND m.user_id = ?`,
      )
      .bind(userId)
      .all<{ project_id: string }>();
    const chatProjectIds = chats
      .map((row) => row.project_id)
      .filter((id) => !plan.projectIds.includes(id));
    const request = await fileErasure(c.env, {
      requestedBy: userId,
      orgId: null,
      subject: { type: "account", id: userId },
      reason: "account deletion by its owner",
      plan: { ...plan, chatProjectIds },
    });
    clearRefreshCookie(c);
    return c.json(toErasureRequest(request), 202);
  });

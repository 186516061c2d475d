import { AppError, type Me, type Role } from "@parley/shared";
import { Hono } from "hono";
import { iso } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";

export const me = new Hono<AppEnv>().get("/", async (c) => {
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
});

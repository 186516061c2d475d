import { env } from "cloudflare:test";
import type { AgentCaller } from "../src/agents/caller.ts";
import { verifyAccessToken } from "../src/auth/tokens.ts";
import { config } from "../src/env.ts";
import type { World } from "./helpers.ts";

/** Counting what reaches D1, for tests that prove a path makes fewer round trips. */

/** `db`, counting what reaches D1: each `batch` (with its size) and each lone statement's call. */
export function countingDb(db: D1Database): { db: D1Database; calls: string[] } {
  const calls: string[] = [];
  const wrap = (statement: D1PreparedStatement): D1PreparedStatement => {
    const target = statement as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const method of ["first", "run", "all", "raw"]) {
      const original = (target[method] as (...args: unknown[]) => unknown).bind(statement);
      target[method] = (...args: unknown[]) => {
        calls.push(method);
        return original(...args);
      };
    }
    const bind = statement.bind.bind(statement);
    target.bind = (...args: unknown[]) => wrap(bind(...args));
    return statement;
  };
  const counted = new Proxy(db, {
    get(target, property) {
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          calls.push(`batch:${statements.length}`);
          return target.batch(statements);
        };
      }
      if (property === "prepare") return (sql: string) => wrap(target.prepare(sql));
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { db: counted, calls };
}

/** The member's caller of `w`'s session, as the Worker would forward it. */
export async function memberCaller(w: World): Promise<AgentCaller> {
  const token = await verifyAccessToken(config(env), w.member.token);
  return {
    kind: "member",
    appId: null,
    userId: w.member.id,
    orgId: w.orgId,
    projectId: w.projectId,
    sessionId: w.sessionId,
    role: "member",
    familyId: token.familyId,
    tokenVersion: token.version,
    expiresAt: token.expiresAt,
  };
}

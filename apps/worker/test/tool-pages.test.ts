import { env } from "cloudflare:test";
import { type EndUserToolCall, newId, type ToolCall, type ToolSource } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { asEndUser, endUserToken, openSession } from "./end-users.ts";
import { api, type World, world } from "./helpers.ts";
import { type Page, pages } from "./pages.ts";

/**
 * The tool lists page as every id-keyed list does (db/pagination.ts `idPage`): newest first,
 * `limit` at a time, `nextCursor` until the last page; each page holds only what its reader may
 * see. The sources, a member's session's calls and an end user's calls (the embed's "Actions
 * taken", which pages with "Show more").
 */

async function source(w: World, name: string, at: number): Promise<string> {
  const id = newId("toolSource", at);
  await env.DB.prepare(
    `INSERT INTO tool_sources (id, org_id, kind, name, url, created_by, created_at, updated_at)
     VALUES (?, ?, 'http', ?, 'https://api.example.com', ?, ?, ?)`,
  )
    .bind(id, w.orgId, name, w.owner.id, at, at)
    .run();
  return id;
}

async function call(
  w: World,
  sessionId: string,
  caller: { kind: "member" | "end_user"; id: string },
  at: number,
): Promise<string> {
  const id = newId("toolCall", at);
  await env.DB.prepare(
    `INSERT INTO tool_calls (id, org_id, source_id, tool_name, session_id, caller_kind, caller_id,
       access, status, duration_ms, request_bytes, response_bytes, created_at)
     VALUES (?, ?, 'tsrc_gone', ?, ?, ?, ?, 'read', 'ok', 5, 10, 20, ?)`,
  )
    .bind(id, w.orgId, `tool_${at}`, sessionId, caller.kind, caller.id, at)
    .run();
  return id;
}

describe("tool lists, page by page", () => {
  it("an org's sources: newest first, two at a time", async () => {
    const w = await world();
    const t = Date.now();
    const ids = [await source(w, "A", t - 3000), await source(w, "B", t - 2000)];
    ids.push(await source(w, "C", t - 1000));
    const read = (path: string) => api<Page<ToolSource>>("GET", path, { token: w.member.token });
    expect(await pages(read, `/api/orgs/${w.orgId}/tool-sources`, 2)).toEqual([
      [ids[2], ids[1]],
      [ids[0]],
    ]);
  });

  it("a session's calls for its owner (a member), and an end user's own calls only, page the same way", async () => {
    const w = await world();
    const t = Date.now();
    const mine = [];
    for (let i = 0; i < 3; i++) {
      mine.push(await call(w, w.sessionId, { kind: "member", id: w.member.id }, t - 3000 + i));
    }
    const read = (path: string) => api<Page<ToolCall>>("GET", path, { token: w.member.token });
    expect(await pages(read, `/api/sessions/${w.sessionId}/tool-calls`, 2)).toEqual([
      [mine[2], mine[1]],
      [mine[0]],
    ]);

    const token = (await endUserToken(w, "pager")).accessToken;
    const session = await openSession(token);
    const theirs = [];
    for (let i = 0; i < 5; i++) {
      theirs.push(await call(w, session.id, { kind: "end_user", id: "eu_else" }, t + i * 2));
    }
    const me = await asEndUser<{ endUser: { id: string } }>("GET", "/api/embed/me", token);
    const ownIds = [];
    for (let i = 0; i < 3; i++) {
      ownIds.push(
        await call(w, session.id, { kind: "end_user", id: me.body.endUser.id }, t + i * 2 + 1),
      );
    }
    const readAsEndUser = (path: string) => asEndUser<Page<EndUserToolCall>>("GET", path, token);
    expect(await pages(readAsEndUser, `/api/embed/sessions/${session.id}/tool-calls`, 2)).toEqual([
      [ownIds[2], ownIds[1]],
      [ownIds[0]],
    ]);
    expect(theirs).toHaveLength(5);
  });
});

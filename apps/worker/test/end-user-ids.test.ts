import { env } from "cloudflare:test";
import { type DataExport, type EmbedToken, MAX_EXTERNAL_ID_CHARS } from "@parley/shared";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { exchange, hs256Token, secretApp } from "./apps.ts";
import {
  type ApiResponse,
  api,
  apiWithVars,
  BASE,
  errorCode,
  finishExport,
  world,
} from "./helpers.ts";

/**
 * Every end user the exchange accepts can be erased, and exported (issue 28.5;
 * docs/2026-12-06-end-user-ids.md). One rule for external ids (packages/shared external-ids.ts)
 * is used by the exchange, the API-key mint and the erasure, so the property holds for any
 * string: what the exchange accepts, `POST .../end-users/erase` names and erases; what it refuses,
 * the erasure refuses too, with the same code, and nothing is written.
 */

type World = Awaited<ReturnType<typeof world>>;

/** The odd strings an outside probe tries first, and the ones around each rule's edge. */
const EDGES = [
  ".",
  "..",
  "...",
  "/",
  "a/b",
  "../../etc/passwd",
  "%2e%2e",
  "%2F",
  "%",
  "?x=1",
  "#frag",
  "a b",
  "ada@example.com",
  "Ada",
  "ada",
  "é",
  "e\u0301",
  "😀",
  "日本語",
  "x".repeat(MAX_EXTERNAL_ID_CHARS),
  "😀".repeat(MAX_EXTERNAL_ID_CHARS / 2),
  // Refused:
  "",
  " ",
  " lead",
  "trail ",
  "\u00a0nbsp",
  "x".repeat(MAX_EXTERNAL_ID_CHARS + 1),
  "a\tb",
  "a\nb",
  "a\u0000b",
  "a\u007fb",
  "a\u0085b",
  "a\u2028b",
  "\u202eevil",
  "\u200b",
  "\u0301lead-mark",
  "a\ufffdb",
  "a\ud800b",
  "a\udc00b",
];

/** Strings made of the pieces that break things: dots, slashes, escapes, controls, marks, pairs. */
const oddString = fc.string({
  unit: fc.oneof(
    fc.constantFrom(".", "/", "\\", "%", "%2e", "%2F", "?", "#", " ", "\t", "\n", "\r"),
    fc.constantFrom("\u0000", "\u001f", "\u007f", "\u0085", "\u00a0", "\u200b", "\u2028"),
    fc.constantFrom("\u202e", "\u2066", "\u0301", "\ud800", "\udfff", "\ufffd", "😀", "é"),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 3 }),
    fc.string({ unit: "binary", minLength: 1, maxLength: 2 }),
  ),
  maxLength: MAX_EXTERNAL_ID_CHARS + 12,
});

interface Rig {
  w: World;
  app: { id: string; secret: string };
}

async function rig(): Promise<Rig> {
  const w = await world();
  return { w, app: await secretApp(w) };
}

const exchangeAs = async (r: Rig, sub: string) =>
  exchange(r.app.id, await hs256Token(r.app.secret, { claims: { sub } }));

const erase = (r: Rig, body: unknown) =>
  api<{ status: string }>("POST", `/api/apps/${r.app.id}/end-users/erase`, {
    token: r.w.apiKey.secret,
    body,
  });

const endUsersNamed = async (r: Rig, externalId: string) =>
  (
    await env.DB.prepare("SELECT COUNT(*) AS n FROM end_users WHERE app_id = ? AND external_id = ?")
      .bind(r.app.id, externalId)
      .first<{ n: number }>()
  )?.n ?? -1;

/**
 * The property for one string: accepted by the exchange, it is erased by name (and its row is
 * gone); refused, the erasure refuses it with the same status and code, and no end user is made.
 */
async function holdsFor(r: Rig, sub: string): Promise<ApiResponse<EmbedToken>> {
  const exchanged = await exchangeAs(r, sub);
  if (exchanged.status === 200) {
    expect(exchanged.body.endUser.externalId).toBe(sub);
    expect(await endUsersNamed(r, sub)).toBe(1);
    const erased = await erase(r, { externalId: sub });
    expect(erased.status, JSON.stringify({ sub, body: erased.body })).toBe(202);
    expect(erased.body.status).toBe("completed");
    expect(await endUsersNamed(r, sub)).toBe(0);
  } else {
    expect(exchanged.status, JSON.stringify({ sub, body: exchanged.body })).toBe(400);
    expect(errorCode(exchanged)).toBe("invalid_request");
    const erased = await erase(r, { externalId: sub });
    expect(erased.status, JSON.stringify({ sub, body: erased.body })).toBe(exchanged.status);
    expect(errorCode(erased)).toBe(errorCode(exchanged));
    // The API-key mint takes the same rule.
    const minted = await api("POST", `/api/apps/${r.app.id}/end-user-tokens`, {
      token: r.w.apiKey.secret,
      body: { sub },
    });
    expect(minted.status).toBe(exchanged.status);
    expect(await endUsersNamed(r, sub)).toBe(0);
  }
  return exchanged;
}

describe("external ids: what the exchange accepts, the erasure names", () => {
  it("the probe's `.` and `..` are created by the exchange and erased by name; the old path form could not reach them", async () => {
    const r = await rig();
    for (const sub of [".", ".."]) {
      const made = await exchangeAs(r, sub);
      expect(made.status).toBe(200);
      // The path form: a URL normalizes `.` and `..` segments away, escaped or not.
      for (const segment of [sub, encodeURIComponent(sub), sub.replaceAll(".", "%2e")]) {
        const path = await api("DELETE", `/api/apps/${r.app.id}/end-users/${segment}`, {
          token: r.w.apiKey.secret,
        });
        expect(path.status, segment).not.toBe(202);
      }
      expect(await endUsersNamed(r, sub)).toBe(1);
      expect((await erase(r, { externalId: sub })).status).toBe(202);
      expect(await endUsersNamed(r, sub)).toBe(0);
    }
  }, 60_000);

  it("holds for every edge case, each accepted or refused as the rule says", async () => {
    const r = await rig();
    const accepted: string[] = [];
    for (const sub of EDGES) {
      if ((await holdsFor(r, sub)).status === 200) accepted.push(sub);
    }
    expect(accepted).toEqual(EDGES.slice(0, EDGES.indexOf("")));
  }, 120_000);

  it("holds for any odd string (property, fast-check)", async () => {
    const r = await rig();
    const seen = { accepted: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(oddString, async (sub) => {
        const status = (await holdsFor(r, sub)).status;
        seen[status === 200 ? "accepted" : "refused"]++;
      }),
      // Each accepted run files and runs a whole erasure (about half a second here).
      { numRuns: 40 },
    );
    // Both sides of the rule were exercised, not only one.
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);
  }, 180_000);

  it("every accepted id is in the org's export exactly as sent, and erasable by its Parley id too", async () => {
    const r = await rig();
    const subs = [...EDGES.slice(0, EDGES.indexOf("")), ...fc.sample(oddString, 12)];
    const made = new Map<string, string>();
    for (const sub of subs) {
      const res = await exchangeAs(r, sub);
      if (res.status === 200) made.set(sub, res.body.endUser.id);
    }
    expect(made.size).toBeGreaterThanOrEqual(EDGES.indexOf(""));
    const started = await api<DataExport>("POST", `/api/orgs/${r.w.orgId}/exports`, {
      token: r.w.owner.token,
    });
    await finishExport(started.body.id);
    const done = await api<DataExport>("GET", `/api/orgs/${r.w.orgId}/exports/${started.body.id}`, {
      token: r.w.owner.token,
    });
    const archive = await api<{ sections: { endUsers: { id: string; externalId: string }[] } }>(
      "GET",
      (done.body.downloadUrl ?? "").slice(BASE.length),
    );
    const exported = new Map(archive.body.sections.endUsers.map((e) => [e.id, e.externalId]));
    for (const [sub, id] of made) expect(exported.get(id)).toBe(sub);
    // The opaque id names each of them as well, whatever their external id is.
    for (const id of made.values()) {
      expect((await erase(r, { endUserId: id })).status).toBe(202);
    }
    expect(
      (
        await env.DB.prepare("SELECT COUNT(*) AS n FROM end_users WHERE app_id = ?")
          .bind(r.app.id)
          .first<{ n: number }>()
      )?.n,
    ).toBe(0);
  }, 120_000);

  it("the body takes exactly one of externalId and endUserId, and nothing else", async () => {
    const r = await rig();
    for (const body of [
      {},
      { externalId: "a", endUserId: "eu_00000000000000000000000000" },
      { endUserId: "user-1" },
      { externalId: 42 },
      { externalId: "a", extra: 1 },
    ]) {
      const res = await erase(r, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect((await erase(r, { endUserId: "eu_00000000000000000000000000" })).status).toBe(404);
    expect((await erase(r, { externalId: "never-seen" })).status).toBe(404);
  });
});

describe("the erasure's first form, with the tenant's id in the path (deprecated)", () => {
  it("answers until END_USER_ERASE_PATH_END, saying so, and 410 after it, changing nothing", async () => {
    const r = await rig();
    expect((await exchangeAs(r, "path-user")).status).toBe(200);
    const path = `/api/apps/${r.app.id}/end-users/path-user`;
    const asKey = { token: r.w.apiKey.secret };
    const ended = await apiWithVars(
      { END_USER_ERASE_PATH_END: "2000-01-01" },
      "DELETE",
      path,
      asKey,
    );
    expect(ended.status).toBe(410);
    expect(errorCode(ended)).toBe("gone");
    expect(ended.headers.get("link")).toBe(
      `</api/apps/${r.app.id}/end-users/erase>; rel="successor-version"`,
    );
    expect(await endUsersNamed(r, "path-user")).toBe(1);
    const open = await apiWithVars(
      { END_USER_ERASE_PATH_END: "2999-12-31" },
      "DELETE",
      path,
      asKey,
    );
    expect(open.status).toBe(202);
    expect(open.headers.get("deprecation")).toBe(`@${Date.parse("2026-12-06") / 1000}`);
    expect(open.headers.get("sunset")).toBe("Wed, 01 Jan 3000 00:00:00 GMT");
    expect(await endUsersNamed(r, "path-user")).toBe(0);
  });

  it("its last day is a config value with a documented default, 2027-01-05", async () => {
    const { config } = await import("../src/env.ts");
    const end = config({ ...env } as Env).pathFormsEnd.endUserErase;
    expect(new Date(end).toISOString()).toBe("2027-01-06T00:00:00.000Z");
    const unset = config({ ...env, END_USER_ERASE_PATH_END: "" } as Env).pathFormsEnd.endUserErase;
    expect(unset).toBe(end);
  });
});

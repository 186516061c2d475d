import { env } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { sourceClient } from "../src/tools/source-client.ts";
import { api, world } from "./helpers.ts";
import { lab, labSource, shareJwks } from "./tools.ts";

beforeAll(shareJwks);

/**
 * Issue 30.1: an MCP source's tools are listed, refreshed on demand and on change. "On change" is
 * the server's `notifications/tools/list_changed` on the stream a live connection keeps open (the
 * source's client object keeps its connection after a call); nobody calls the refresh route here.
 */

/** Changes the lab's tool list for one source, in its live sessions and its later ones. */
async function changeLabTools(src: string, change: { add?: string[]; remove?: string[] }) {
  const res = await fetch(`${lab()}/__tools`, {
    method: "POST",
    body: JSON.stringify({ src, ...change }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { live: number };
}

/** The source's stored tool names, read through the API until `done` holds or the deadline. */
async function namesUntil(
  id: string,
  token: string,
  done: (names: string[]) => boolean,
  deadlineMs = 10_000,
): Promise<string[]> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const res = await api<ToolSource>("GET", `/api/tool-sources/${id}`, { token });
    expect(res.status).toBe(200);
    const names = res.body.tools.map((t) => t.name);
    if (done(names) || Date.now() > until) return names;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("an MCP server's list_changed", () => {
  it("a tool the server adds or removes changes the stored list, without a refresh", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const listed = source.tools.map((t) => t.name);
    expect(listed).toContain("note");
    expect(listed).not.toContain("added_later");

    // One call, as a turn makes it: the source's client object keeps its connection (and the
    // stream the server's notifications come on) open afterwards.
    const called = await sourceClient(env, source.id).call({
      source: {
        id: source.id,
        orgId: w.orgId,
        kind: "mcp",
        url: source.url,
        version: source.version,
        credentialHeader: null,
        credentialSealed: null,
      },
      tool: { name: "whoami", method: null, path: null },
      args: {},
      identity: {
        subject: w.admin.id,
        subjectKind: "member",
        orgId: w.orgId,
        appId: null,
        sessionId: null,
      },
      timeoutMs: 5_000,
      maxResponseBytes: 1_000_000,
    });
    expect(called.ok).toBe(true);

    // The server adds one tool and takes one out: its live sessions say list_changed (the
    // registration's listing session is among them: Parley closes its side without ending it).
    const { live } = await changeLabTools(source.id, { add: ["added_later"], remove: ["note"] });
    expect(live).toBeGreaterThanOrEqual(1);
    const changed = await namesUntil(
      source.id,
      w.admin.token,
      (names) => names.includes("added_later") && !names.includes("note"),
    );
    expect(changed).toContain("added_later");
    expect(changed).not.toContain("note");
    expect(changed).toEqual(expect.arrayContaining(["whoami", "slow", "big", "fails"]));

    // And takes the added one out again.
    await changeLabTools(source.id, { remove: ["added_later"] });
    const shrunk = await namesUntil(
      source.id,
      w.admin.token,
      (names) => !names.includes("added_later"),
    );
    expect(shrunk).not.toContain("added_later");
    expect(shrunk).not.toContain("note");
    expect(shrunk).toContain("whoami");
  });
});

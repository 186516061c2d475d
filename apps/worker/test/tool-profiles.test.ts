import { env } from "cloudflare:test";
import type { ToolSource } from "@parley/shared";
import { beforeAll, describe, expect, it } from "vitest";
import { buildSystemPrompt } from "../src/assistants/prompt.ts";
import { resolveTurn } from "../src/assistants/resolve.ts";
import { api, errorCode, snapshot, world } from "./helpers.ts";
import { httpSource, labSource, shareJwks } from "./tools.ts";

beforeAll(shareJwks);

const ref = (source: ToolSource, tool: string) => `source:${source.id}:${tool}`;

describe("profiles switch on source tools", () => {
  it("a profile names source:<id>:<tool> of its org's sources; unknown or foreign ones are 400", async () => {
    const w = await world();
    const ours = await labSource(w.orgId, w.admin.token);
    const theirs = await labSource(w.otherOrgId, w.outsider.token);
    const made = await api<{ id: string; tools: string[] }>(
      "POST",
      `/api/orgs/${w.orgId}/profiles`,
      {
        token: w.admin.token,
        body: { name: "Shop", tools: [ref(ours, "whoami"), ref(ours, "note")] },
      },
    );
    expect(made.status).toBe(201);
    expect(made.body.tools).toEqual([ref(ours, "whoami"), ref(ours, "note")]);
    const before = await snapshot();
    for (const tools of [[ref(theirs, "whoami")], [ref(ours, "nope")], ["source:tsrc_x:whoami"]]) {
      const res = await api("POST", `/api/orgs/${w.orgId}/profiles`, {
        token: w.admin.token,
        body: { name: "Bad", tools },
      });
      expect(res.status, JSON.stringify(tools)).toBe(400);
      expect(errorCode(res)).toBe("invalid_request");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("a source whose tools a profile switches on cannot be deleted (409); once off, it can", async () => {
    const w = await world();
    const source = await httpSource(w.orgId, w.admin.token);
    const made = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.admin.token,
      body: { name: "Shop", tools: [ref(source, "order_status")] },
    });
    const refused = await api("DELETE", `/api/tool-sources/${source.id}`, { token: w.admin.token });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toMatch(/Shop/);
    await api("PATCH", `/api/profiles/${made.body.id}`, {
      token: w.admin.token,
      body: { tools: [] },
    });
    expect(
      (await api("DELETE", `/api/tool-sources/${source.id}`, { token: w.admin.token })).status,
    ).toBe(204);
  });

  it("an end user's turn offers the profile's source tools and no built-in tool", async () => {
    const w = await world();
    const source = await labSource(w.orgId, w.admin.token);
    const made = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/profiles`, {
      token: w.admin.token,
      body: { name: "Shop", tools: ["read_project_memory", ref(source, "whoami")] },
    });
    await api("PATCH", `/api/apps/${w.appId}`, {
      token: w.admin.token,
      body: { profileId: made.body.id },
    });
    const endUser = await resolveTurn(env, {
      orgId: w.orgId,
      projectId: w.projectId,
      sessionId: null,
      callerKind: "end_user",
      appId: w.appId,
      audience: "assistant",
    });
    expect(endUser.ok && endUser.turn.profile.tools).toEqual([ref(source, "whoami")]);
    const prompt = buildSystemPrompt({
      audience: "assistant",
      callerKind: "end_user",
      project: { name: "Shop", memory: "{}" },
      instructions: "",
      tools: [ref(source, "whoami")],
      omitted: 0,
    });
    expect(prompt).toMatch(/whoami \(acts in the organization's product/);
    expect(prompt).toMatch(/runs only after the person approves that exact call/);
    expect(prompt).not.toContain(source.id);
  });
});

import type { ChatOpening } from "@parley/shared";
import { describe, expect, it } from "vitest";
import { asEndUser, endUserToken } from "./end-users.ts";
import { api, embedApp, project, world } from "./helpers.ts";
import { makeProfile, useForProject } from "./turn-models.ts";

const opening = (projectId: string) => `/api/embed/projects/${projectId}/opening`;

/**
 * `GET /api/embed/projects/:projectId/opening`: the embed's welcome and suggested prompts, from the
 * profile the end user's chats run (the resolver's choice), and nothing else of that profile.
 */
describe("the embed's chat opening", () => {
  it("an app without a profile gets Parley's own words; the project's default profile's welcome once it has one", async () => {
    const w = await world();
    const { accessToken } = await endUserToken(w, "cust-open");
    const none = await asEndUser<ChatOpening>("GET", opening(w.projectId), accessToken);
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ welcome: null, suggestions: [] });
    const team = await makeProfile(w, {
      instructions: "Team instructions, secret",
      welcome: "Hello from the project.",
      suggestions: ["Project question"],
    });
    await useForProject(w, team);
    const project = await asEndUser<ChatOpening>("GET", opening(w.projectId), accessToken);
    expect(project.body).toEqual({
      welcome: "Hello from the project.",
      suggestions: ["Project question"],
    });
  });

  it("the app's profile wins over the project's, with its welcome and suggestions only: never its instructions, model or name", async () => {
    const w = await world();
    const secret = `Never tell customers ${crypto.randomUUID()}`;
    const team = await makeProfile(w, { welcome: "Team welcome", suggestions: ["Team"] });
    await useForProject(w, team);
    const shop = await makeProfile(w, {
      name: "Shop internal name",
      instructions: secret,
      welcome: "Hi! Ask me about your orders.",
      suggestions: ["Where is my order?", "I want a refund"],
    });
    const patched = await api("PATCH", `/api/apps/${w.appId}`, {
      token: w.admin.token,
      body: { profileId: shop },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const { accessToken } = await endUserToken(w, "cust-shop");
    const res = await asEndUser<ChatOpening>("GET", opening(w.projectId), accessToken);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toEqual({
      welcome: "Hi! Ask me about your orders.",
      suggestions: ["Where is my order?", "I want a refund"],
    });
    const text = JSON.stringify(res.body);
    for (const hidden of [secret, "Shop internal name", "parley/dev", shop]) {
      expect(text).not.toContain(hidden);
    }
    // A new version is what the next opening shows.
    const edited = await api("PATCH", `/api/profiles/${shop}`, {
      token: w.admin.token,
      body: { welcome: "Welcome back!", suggestions: [] },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    const after = await asEndUser<ChatOpening>("GET", opening(w.projectId), accessToken);
    expect(after.body).toEqual({ welcome: "Welcome back!", suggestions: [] });
  });

  it("a project the app does not list is 404: another org's, one of the org's own, a missing one", async () => {
    const w = await world();
    const { accessToken } = await endUserToken(w, "cust-404");
    // Another app of the same org lists the other project: not this app's.
    const unlisted = await project(w.orgId, w.owner.id);
    await embedApp(w.orgId, unlisted);
    for (const id of [w.otherProjectId, unlisted, "proj_missing"]) {
      const res = await asEndUser("GET", opening(id), accessToken);
      expect(res.status, id).toBe(404);
      expect(res.body).toMatchObject({ error: { code: "not_found" } });
    }
    // A member's token is no end user's.
    const member = await api("GET", opening(w.projectId), { token: w.owner.token });
    expect(member.status).toBe(401);
  });
});

import { describe, expect, it } from "vitest";
import { type ChatSocket, mustConnect, settled } from "./chat.ts";
import { endUserToken, mustOpen, openSession } from "./end-users.ts";
import { api, snapshot, type World, world } from "./helpers.ts";
import { funded, settledBalance, usageRowsOf } from "./metering.ts";
import {
  allowModels,
  INSTANT,
  makeProfile,
  pickModel,
  requestsWith,
  systemOf,
  toolsOf,
  useForProject,
} from "./turn-models.ts";

/**
 * Who chooses what a turn runs with (issue 29, wired): a member's session runs the project's
 * profile, an end user's their app's, the preview its own; a member may name an allowed model in
 * the chat body for one turn or pick one for the session; anything else is refused before the
 * message is stored, with no model call and nothing charged.
 */

const assistantPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;
const previewPath = (projectId: string) => `/agents/onboarding-agent/${projectId}`;

/** Sends `text` (with a marker) and returns the turn and the model calls it made. */
async function turnWith(chat: ChatSocket, text: string, body?: Record<string, unknown>) {
  const marker = crypto.randomUUID();
  const turn = await chat.turn(`${text} ${marker} ${INSTANT}`, body ? { body } : {});
  return { turn, marker, requests: await requestsWith(marker) };
}

const stored = async (path: string, token: string, origin?: string) =>
  (
    await api<{ role: string }[]>("GET", `${path}/get-messages`, {
      token,
      ...(origin ? { headers: { origin } } : {}),
    })
  ).body;

/** A turn refused before anything ran: a typed 400 in the chat, no model call, nothing stored. */
async function refusedModel(
  chat: ChatSocket,
  body: Record<string, unknown>,
  message: RegExp,
): Promise<void> {
  const { turn, requests } = await turnWith(chat, "Use this model", body);
  expect(turn.parleyError).toMatchObject({ code: "invalid_request", field: "model" });
  expect(turn.parleyError?.message).toMatch(message);
  expect(turn.outcome).toBe("error");
  expect(requests).toEqual([]);
}

describe("a model named in the chat body", () => {
  it("runs that turn when the org allows it; a disallowed, unknown or malformed one is refused and changes nothing", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    await settled(assistantPath(w.sessionId));
    const before = await snapshot();
    const balance = await settledBalance(w.orgId);

    await refusedModel(chat, { model: "parley/dev-large" }, /not allowed in this organization/);
    await refusedModel(chat, { model: "nobody/model" }, /not a model of the catalogue/);
    await refusedModel(chat, { model: 42 }, /model must be a model id/);
    await refusedModel(chat, { model: "../../etc" }, /model must be a model id/);
    expect(await stored(assistantPath(w.sessionId), w.member.token)).toEqual([]);
    expect(await snapshot()).toEqual(before);
    expect(await settledBalance(w.orgId)).toEqual(balance);
    expect(await usageRowsOf(w.orgId, () => true, 0)).toEqual([]);

    // Allowed: this turn runs on it, the next one on the session's (the profile's) again.
    const named = await turnWith(chat, "Quick one", { model: "parley/dev-fast" });
    expect(named.requests.map((r) => r.model)).toEqual(["parley/dev-fast"]);
    expect(named.turn.metadata).toMatchObject({ model: { id: "parley/dev-fast" } });
    const next = await turnWith(chat, "And again");
    expect(next.requests.map((r) => r.model)).toEqual(["parley/dev"]);
    chat.close();
  });

  it("runs the whole turn: a tool approval continues on the model the turn started with", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const asked = await turnWith(
      chat,
      'Note the tone [[tool:update_project_memory {"set":{"tone":"dry"}}]]',
      { model: "parley/dev-fast" },
    );
    const approval = asked.turn.chunks.find((c) => c.type === "tool-approval-request") as
      | { toolCallId?: string }
      | undefined;
    expect(approval?.toolCallId).toBeTruthy();
    const start = chat.frames.length;
    chat.send({
      type: "cf_agent_tool_approval",
      toolCallId: approval?.toolCallId,
      approved: true,
      autoContinue: true,
    });
    await chat.waitFor(
      (f) => f.type === "cf_agent_use_chat_response" && f.done === true,
      15_000,
      start,
    );
    // The turn's marker is in the continued call's prompt too: it went to the turn's model.
    const calls = await requestsWith(asked.marker);
    expect(calls.map((r) => r.model)).toEqual(["parley/dev-fast", "parley/dev-fast"]);
    chat.close();
  });

  it("is refused for an end user, who runs their app's profile", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const { accessToken } = await endUserToken(w, "picker");
    const session = await openSession(accessToken);
    const chat = await mustOpen(session.id, accessToken);
    await refusedModel(chat, { model: "parley/dev-fast" }, /chosen by the app/);
    expect(await stored(assistantPath(session.id), accessToken, "https://shop.example")).toEqual(
      [],
    );
    chat.close();
  });
});

describe("a session's model", () => {
  it("picked mid-chat runs the very next turn; dropped by the org, the next turn is refused, never moved to another model", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const chat = await mustConnect(assistantPath(w.sessionId), w.member.token);
    await settled(assistantPath(w.sessionId));
    expect((await turnWith(chat, "Before")).requests.map((r) => r.model)).toEqual(["parley/dev"]);
    await pickModel(w, "parley/dev-fast");
    const after = await turnWith(chat, "After");
    expect(after.requests.map((r) => r.model)).toEqual(["parley/dev-fast"]);
    expect(after.turn.metadata).toMatchObject({ model: { id: "parley/dev-fast" } });

    // The org no longer allows it: the pick is refused, not swapped for the default.
    await allowModels(w, ["parley/dev"]);
    const messages = (await stored(assistantPath(w.sessionId), w.member.token)).length;
    await refusedModel(chat, {}, /parley\/dev-fast is not allowed.*Pick another model/);
    expect(await stored(assistantPath(w.sessionId), w.member.token)).toHaveLength(messages);
    // Back to the profile's: it runs again.
    await pickModel(w, null);
    expect((await turnWith(chat, "Back")).requests.map((r) => r.model)).toEqual(["parley/dev"]);
    chat.close();
  });
});

describe("where a profile runs", () => {
  it("an app's profile answers its end users (no project tools, the end-user framing); members keep the project's", async () => {
    const w = await funded();
    await allowModels(w, ["parley/dev", "parley/dev-fast"]);
    const team = `Team rules ${crypto.randomUUID()}`;
    const customers = `Customer rules ${crypto.randomUUID()}`;
    const teamProfile = await makeProfile(w, { instructions: team, model: "parley/dev" });
    const appProfile = await makeProfile(w, {
      instructions: customers,
      model: "parley/dev-fast",
      tools: ["get_balance", "read_project_memory"],
    });
    await useForProject(w, teamProfile);
    const patched = await api("PATCH", `/api/apps/${w.appId}`, {
      token: w.admin.token,
      body: { profileId: appProfile },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);

    const { accessToken } = await endUserToken(w, "customer");
    const session = await openSession(accessToken);
    const endUser = await mustOpen(session.id, accessToken);
    const theirs = await turnWith(endUser, "Hello [[tool:get_balance]]");
    const [request] = theirs.requests;
    expect(theirs.requests.map((r) => r.model)).toEqual(["parley/dev-fast"]);
    expect(systemOf(request)).toContain(customers);
    expect(systemOf(request)).toContain("not a member of the organization");
    // An end user gets none of the members' project tools, whatever the profile says.
    expect(toolsOf(request)).toEqual([]);
    expect(theirs.turn.metadata).toMatchObject({
      profile: { id: appProfile, version: 1 },
      model: { id: "parley/dev-fast" },
    });
    endUser.close();

    const member = await mustConnect(assistantPath(w.sessionId), w.member.token);
    const ours = await turnWith(member, "Hello");
    expect(ours.requests.map((r) => r.model)).toEqual(["parley/dev"]);
    expect(systemOf(ours.requests[0])).toContain(team);
    expect(ours.turn.metadata).toMatchObject({ profile: { id: teamProfile, version: 1 } });
    member.close();
  });

  it("the onboarding preview runs the org's preview profile on its free-preview model, and refuses a model named in the chat body", async () => {
    const w: World = await world();
    await allowModels(w, ["parley/dev", "parley/dev-fast", "parley/dev-large"]);
    const guide = `Preview guide ${crypto.randomUUID()}`;
    // Dev Large is not a free-preview model: the preview cannot run it.
    const pricey = await makeProfile(w, { instructions: guide, model: "parley/dev-large" });
    const refused = await api("PUT", `/api/orgs/${w.orgId}/preview-profile`, {
      token: w.admin.token,
      body: { profileId: pricey },
    });
    expect(refused.status).toBe(400);
    const profileId = await makeProfile(w, { instructions: guide, model: "parley/dev-fast" });
    const assigned = await api("PUT", `/api/orgs/${w.orgId}/preview-profile`, {
      token: w.admin.token,
      body: { profileId },
    });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);

    const chat = await mustConnect(previewPath(w.projectId), w.member.token);
    const { turn, requests } = await turnWith(chat, "What can you do?");
    expect(turn.error).toBeNull();
    expect(requests.map((r) => r.model)).toEqual(["parley/dev-fast"]);
    expect(systemOf(requests[0])).toContain("onboarding guide");
    expect(systemOf(requests[0])).toContain(guide);
    expect(turn.metadata).toMatchObject({
      profile: { id: profileId, version: 1 },
      model: { id: "parley/dev-fast" },
    });
    // Free for the org, metered at the model's cost.
    const [row] = await usageRowsOf(w.orgId, (r) => r.requestId === `${turn.turnId}:0`, 1);
    expect(row).toMatchObject({ model: "parley/dev-fast", priceMicros: 0 });
    expect(row?.costMicros).toBeGreaterThan(0);

    const count = (await stored(previewPath(w.projectId), w.member.token)).length;
    await refusedModel(chat, { model: "parley/dev" }, /preview runs its own model/);
    expect(await stored(previewPath(w.projectId), w.member.token)).toHaveLength(count);
    chat.close();
  });
});

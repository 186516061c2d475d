import { describe, expect, it } from "vitest";
import { mustConnect } from "./chat.ts";
import { api, world } from "./helpers.ts";
import { funded, modelRequests, settledBalance } from "./metering.ts";

/**
 * A Stop pressed while the server is still admitting the message (a new session's first turn
 * reads D1 and asks the org's account for a lease; the socket's next frame is delivered while it
 * waits): the SDK makes a request's abort signal only once the turn starts, and ignores a cancel
 * for a request it has not seen, so the reply used to run, and be charged, after the person
 * stopped it.
 */

const agentPath = (sessionId: string) => `/agents/assistant-agent/${sessionId}`;

describe("a Stop that arrives while the message is being admitted", () => {
  it("stops the reply before any model call: nothing charged, the message kept", async () => {
    const w = await funded();
    const chat = await mustConnect(agentPath(w.sessionId), w.member.token);
    const before = await modelRequests();
    const id = crypto.randomUUID();
    chat.request(id, "stop me [[tps:20]]");
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    const result = await chat.result(id);
    expect(result.outcome).toBe("aborted");
    expect(result.text).not.toContain("Dev model reply");
    expect(await modelRequests()).toBe(before);
    // Nothing spent: the org's posted balance is its grant, whatever the lease holds aside.
    expect((await settledBalance(w.orgId)).postedMicros).toBe(10_000_000);
    // The person's message is kept; the next one runs as usual.
    const next = await chat.turn("and now");
    expect(next.text).toContain("Dev model reply to: and now");
    const stored = await api<{ role: string }[]>("GET", `${agentPath(w.sessionId)}/get-messages`, {
      token: w.member.token,
    });
    expect(stored.body.filter((m) => m.role === "user")).toHaveLength(2);
    chat.close();
  });

  it("in the onboarding preview, a Stop right after the message stops it too: no model call", async () => {
    const w = await world();
    const chat = await mustConnect(`/agents/onboarding-agent/${w.projectId}`, w.member.token);
    const before = await modelRequests();
    const id = crypto.randomUUID();
    chat.request(id, "stop me [[tps:20]]");
    chat.send({ type: "cf_agent_chat_request_cancel", id });
    const result = await chat.result(id);
    expect(result.outcome).toBe("aborted");
    expect(result.text).not.toContain("Dev model reply");
    expect(await modelRequests()).toBe(before);
    const next = await chat.turn("and now");
    expect(next.text).toContain("Dev model reply to: and now");
    chat.close();
  });
});

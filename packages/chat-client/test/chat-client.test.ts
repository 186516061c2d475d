/**
 * The client against the SDK's real server side: the bare `AIChatAgent` fixture under
 * `wrangler dev`, answering through the dev model. Nothing of the protocol is mocked.
 */
import { devReply } from "@parley/dev-model/reply";
import type { UIMessage } from "ai";
import { afterAll, describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import {
  ChatClient,
  ChatClientError,
  type ChatClientOptions,
  type ChatResponseFrame,
  connectChat,
  FrameType,
  type Turn,
} from "../src/index.ts";
import { agentUrl, sleep, waitFor } from "./helpers.ts";

const origin = inject("fixtureOrigin");
const fixture = { origin, agentUrl: (name?: string) => agentUrl(origin, name) };
const clients: ChatClient[] = [];

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

async function connect(url: string, options: ChatClientOptions = {}): Promise<ChatClient> {
  const client = await connectChat(url, options);
  clients.push(client);
  return client;
}

/** id, role and text of each message: what two views of one transcript must agree on. */
function summary(messages: readonly UIMessage[]) {
  return messages.map((m) => ({
    id: m.id,
    role: m.role,
    text: m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""),
  }));
}

async function collect(turn: Turn): Promise<string[]> {
  const deltas: string[] = [];
  for await (const delta of turn.textStream) deltas.push(delta);
  return deltas;
}

/** Resolves once the turn has streamed `count` text deltas. */
async function firstDeltas(turn: Turn, count: number): Promise<void> {
  let seen = 0;
  for await (const _ of turn.textStream) if (++seen >= count) return;
}

function responseFrames(client: ChatClient, requestId: string): ChatResponseFrame[] {
  const frames: ChatResponseFrame[] = [];
  client.onFrame((frame) => {
    if (frame?.type === FrameType.useChatResponse && frame.id === requestId) {
      frames.push(frame as ChatResponseFrame);
    }
  });
  return frames;
}

describe("a turn", () => {
  it("streams the dev model's reply, with timings, chunks and metadata", async () => {
    const client = await connect(fixture.agentUrl());
    expect(client.identity?.agent).toBe("bare-chat-agent");
    const prompt = "Hello there dev model, how are you";
    const turn = client.send(prompt);
    const deltas = await collect(turn);
    const result = await turn.done;

    expect(deltas.join("")).toBe(devReply(prompt));
    expect(deltas.length).toBe(24);
    expect(result).toMatchObject({
      requestId: turn.requestId,
      text: devReply(prompt),
      reasoning: "",
      toolCalls: [],
      outcome: "completed",
      interruptions: 0,
    });
    expect(result.error).toBeUndefined();
    expect(result.firstTokenMs).toBeGreaterThan(0);
    expect(result.totalMs).toBeGreaterThanOrEqual(result.firstTokenMs ?? Number.NaN);
    // ai-chat moves the finish reason into the finish chunk's message metadata
    expect(result.metadata).toEqual([{ finishReason: "stop" }]);
    expect(turn.chunks.map((c) => c.type)).toEqual([
      "start",
      "start-step",
      "text-start",
      ...Array(24).fill("text-delta"),
      "text-end",
      "finish-step",
      "finish",
    ]);
    expect(result.messageId).toBe(turn.chunks[0]?.type === "start" && turn.chunks[0].messageId);
    expect(summary(client.messages())).toEqual([
      { id: turn.userMessage.id, role: "user", text: prompt },
      { id: result.messageId, role: "assistant", text: devReply(prompt) },
    ]);
  });

  it("ends with the error of an error frame, seen through onFrame", async () => {
    const client = await connect(fixture.agentUrl());
    const turn = client.send("Break after two [[error-after:2]]");
    const frames = responseFrames(client, turn.requestId);
    const result = await turn.done;
    expect(result.outcome).toBe("error");
    expect(result.error).toBe("An error occurred.");
    expect(result.text).toBe(devReply("Break after two", { maxTokens: 2 }));
    expect(frames.some((f) => f.error === true && f.body === "An error occurred.")).toBe(true);
  });

  it("stops mid-stream on abort, keeping what was streamed", async () => {
    const url = fixture.agentUrl();
    const client = await connect(url);
    const prompt = "Please stop early [[tps:20]]";
    const turn = client.send(prompt);
    const frames = responseFrames(client, turn.requestId);
    await firstDeltas(turn, 3);
    turn.abort();
    const result = await turn.done;

    expect(result.outcome).toBe("aborted");
    expect(frames.at(-1)).toMatchObject({ done: true, outcome: "aborted" });
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.text.length).toBeLessThan(devReply(prompt).length);
    expect(devReply(prompt).startsWith(result.text)).toBe(true);
    expect(result.totalMs).toBeLessThan(24 * 50);
    // the partial reply is persisted, and the agent takes the next turn
    const persisted = summary(await client.getMessages());
    expect(persisted.at(-1)).toMatchObject({ role: "assistant", text: result.text });
    const next = await client.send("And now in full").done;
    expect(next.text).toBe(devReply("And now in full"));
  });
});

describe("the transcript", () => {
  it("is the same for two clients of one agent, and as get-messages returns it", async () => {
    const url = fixture.agentUrl();
    const a = await connect(url);
    const b = await connect(url);

    const first = await a.send("First from client a").done;
    await waitFor(() => summary(b.messages()).at(-1)?.text === first.text);
    expect(summary(b.messages())).toEqual(summary(a.messages()));

    const second = await b.send("Second from client b").done;
    expect(second.text).toBe(devReply("Second from client b"));
    await waitFor(() => a.messages().length === 4 && summary(a.messages())[3]?.text !== "");
    await waitFor(() => summary(a.messages())[3]?.text === second.text);
    expect(summary(a.messages())).toEqual(summary(b.messages()));

    const persisted = await a.getMessages();
    expect(summary(persisted)).toEqual(summary(a.messages()));
    expect(summary(persisted).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);

    // a client that connects later loads it over HTTP, as useAgentChat does on mount
    const late = await connect(url);
    expect(summary(late.messages())).toEqual(summary(persisted));
  });

  it("is cleared for everyone by clear()", async () => {
    const url = fixture.agentUrl();
    const a = await connect(url);
    const b = await connect(url);
    await a.send("Something to forget").done;
    await waitFor(() => b.messages().length === 2);
    a.clear();
    expect(a.messages()).toEqual([]);
    await waitFor(() => b.messages().length === 0);
    expect(await a.getMessages()).toEqual([]);
  });

  it("sends the whole history by default, as useAgentChat does, or only the new message", async () => {
    const sent: string[] = [];
    class RecordingWebSocket extends WebSocket {
      override send(data: unknown, ...rest: unknown[]): void {
        if (typeof data === "string") sent.push(data);
        (super.send as (...args: unknown[]) => void)(data, ...rest);
      }
    }
    const requestMessages = () =>
      sent
        .map((raw) => JSON.parse(raw) as { type: string; init?: { body: string } })
        .filter((f) => f.type === FrameType.useChatRequest)
        .map((f) => (JSON.parse(f.init?.body ?? "{}") as { messages: UIMessage[] }).messages);

    const url = fixture.agentUrl();
    const client = await connect(url, { WebSocket: RecordingWebSocket });
    await client.send("One").done;
    await client.send("Two", { body: { note: "extra" } }).done;
    await client.send("Three", { sendHistory: "last" }).done;
    const [first, second, third] = requestMessages();
    expect(first?.map((m) => m.role)).toEqual(["user"]);
    expect(summary(second ?? []).map((m) => m.text)).toEqual(["One", devReply("One"), "Two"]);
    expect(summary(third ?? []).map((m) => m.text)).toEqual(["Three"]);
    const body = JSON.parse(
      (
        JSON.parse(sent.filter((s) => s.includes(FrameType.useChatRequest))[1] ?? "{}") as {
          init: { body: string };
        }
      ).init.body,
    ) as Record<string, unknown>;
    expect(body).toMatchObject({ trigger: "submit-message", note: "extra" });
    // the server keeps its own history either way: the third reply follows all five messages
    expect(summary(await client.getMessages())).toHaveLength(6);
  });
});

describe("a dropped connection", () => {
  it("resumes the reply on reconnect(): replayed chunks are applied once", async () => {
    const client = await connect(fixture.agentUrl(), { reconnect: false });
    const prompt = "Resume me after the drop [[tps:20]]";
    const turn = client.send(prompt);
    const frames = responseFrames(client, turn.requestId);
    const streamed = collect(turn);
    await firstDeltas(turn, 3);
    client.drop();
    await waitFor(() => !client.connected);
    await sleep(150);
    await client.reconnect();
    const result = await turn.done;

    expect(result.text).toBe(devReply(prompt));
    expect((await streamed).join("")).toBe(devReply(prompt));
    expect(result.outcome).toBe("completed");
    expect(result.interruptions).toBe(1);
    // the server replayed its buffer (from seq 0) and the client skipped what it had
    expect(frames.some((f) => f.replay === true && f.seq === 0)).toBe(true);
    expect(frames.some((f) => f.replayComplete === true)).toBe(true);
    expect(turn.chunks.filter((c) => c.type === "start")).toHaveLength(1);
    expect(summary(client.messages()).at(-1)?.text).toBe(devReply(prompt));
  });

  it("resumes on its own with the default reconnect policy", async () => {
    const client = await connect(fixture.agentUrl(), { reconnect: { delayMs: 50 } });
    const opens: number[] = [];
    client.on("open", (generation) => opens.push(generation));
    const prompt = "Reconnect by yourself [[tps:20]]";
    const turn = client.send(prompt);
    await firstDeltas(turn, 4);
    client.drop();
    const result = await turn.done;
    expect(opens).toEqual([2]);
    expect(result.text).toBe(devReply(prompt));
    expect(result.interruptions).toBe(1);
  });

  it("recovers a reply that finished while the socket was down", async () => {
    const client = await connect(fixture.agentUrl(), { reconnect: false });
    const prompt = "Finish without me [[tps:40]]";
    const turn = client.send(prompt);
    await firstDeltas(turn, 2);
    client.drop();
    await sleep(24 * 25 + 300);
    expect(turn.pending).toBe(true);
    await client.reconnect();
    const result = await turn.done;
    expect(result.outcome).toBe("completed");
    expect(result.text).toBe(devReply(prompt));
    expect(summary(client.messages()).at(-1)?.text).toBe(devReply(prompt));
  });

  it("ends in-flight turns as interrupted on close()", async () => {
    const client = new ChatClient(fixture.agentUrl());
    await client.connect();
    const turn = client.send("Never mind [[tps:20]]");
    await firstDeltas(turn, 1);
    await client.close();
    const result = await turn.done;
    expect(result.outcome).toBe("interrupted");
    expect(result.error).toBe("The client closed.");
  });
});

describe("a refused upgrade", () => {
  it("rejects connect() with the status and the JSON error body", async () => {
    const refused = await connectChat(fixture.agentUrl(), { token: "bad" }).catch((e) => e);
    expect(refused).toBeInstanceOf(ChatClientError);
    expect(refused).toMatchObject({ status: 401, code: "unauthorized" });
    expect(refused.body).toEqual({
      error: { code: "unauthorized", message: "The token is not valid." },
    });

    const missing = await connectChat(`${fixture.origin}/nowhere/at-all`).catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
  });

  it("and get-messages surfaces a refusal the same way; a good token in the header is taken", async () => {
    const client = new ChatClient(fixture.agentUrl(), { token: "bad" });
    const error = await client.getMessages().catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "unauthorized" });
    const ok = new ChatClient(fixture.agentUrl(), { token: "good" });
    expect(await ok.getMessages()).toEqual([]);
  });

  it("never puts the token in a URL: a good token opens the socket (the fixture refuses ?token=)", async () => {
    const client = await connectChat(fixture.agentUrl(), { token: "good" });
    expect(client.connected).toBe(true);
    await client.close();
  });

  it("with a ticket source, opens each socket with a fresh ticket in the URL", async () => {
    const tickets: string[] = [];
    const client = await connectChat(fixture.agentUrl(), {
      ticket: () => {
        const ticket = `ct_${tickets.length}`;
        tickets.push(ticket);
        return ticket;
      },
    });
    expect(tickets).toEqual(["ct_0"]);
    await client.close();
  });
});

describe("raw frames", () => {
  it("sends malformed frames as they are; the bare agent ignores them and keeps working", async () => {
    const client = await connect(fixture.agentUrl());
    const seen: string[] = [];
    client.onFrame((_frame, raw) => seen.push(raw));
    client.sendRaw("not json");
    client.sendRaw(
      JSON.stringify({
        type: FrameType.useChatRequest,
        id: "x",
        init: { method: "POST", body: "{" },
      }),
    );
    client.sendRaw(
      JSON.stringify({ type: FrameType.useChatRequest, id: "y", init: { method: "POST" } }),
    );
    const result = await client.send("Still there?").done;
    expect(result.text).toBe(devReply("Still there?"));
    expect(seen.some((raw) => raw.includes('"id":"x"') || raw.includes('"id":"y"'))).toBe(false);
  });
});

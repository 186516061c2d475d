// Bench-only Worker: the whole platform, and one route that times a tool call two ways from inside
// a session's chat object, as a turn makes it: through Parley (`sourceTools`' execute: the
// identity token, the source's client object, the guarded fetch, the result framed, the call
// recorded and settled) and directly (the agents SDK's MCP client of the same object, connected
// to the same server, no token). Not deployed; bench/tools.mjs runs it under wrangler dev.
import type { ToolSet } from "ai";
import { AssistantAgent as PlatformAssistantAgent } from "../apps/worker/src/agents/assistant-agent.ts";
import worker from "../apps/worker/src/index.ts";
import { sourceClient } from "../apps/worker/src/tools/source-client.ts";
import { type SourceRow, sourceRef, sourcesOfOrg } from "../apps/worker/src/tools/sources-db.ts";
import { sourceTools } from "../apps/worker/src/tools/turn-tools.ts";

// Every Durable Object class of the Worker, whichever it declares: the class defined below
// takes precedence over the one of the same name (a local export wins over `export *`), and a
// class added to the Worker later is exported here too (MailOutbox was missing: wrangler refused
// to start this bench).
export * from "../apps/worker/src/index.ts";

interface BenchCall {
  orgId: string;
  projectId: string;
  userId: string;
  ref: string;
  tool: string;
  url: string;
  args: Record<string, unknown>;
}

type Execute = (args: unknown, options: Record<string, unknown>) => Promise<unknown>;

export class AssistantAgent extends PlatformAssistantAgent {
  #tools: (ToolSet | null)[] = [null, null];
  #calls = [0, 0];
  #direct: string | null = null;
  #row: SourceRow | null = null;

  /**
   * One call through Parley's path (the turn's tools are built once per 8 calls, as a turn would).
   * `unsettled`: the same, but the call is never closed (no row marked closed, no settlement or
   * record; its row is still written before it goes out): shows what closing costs the call here,
   * where the billing account, D1 and the chat object share one local process.
   */
  async benchParley(input: BenchCall, unsettled = false): Promise<void> {
    const slot = unsettled ? 1 : 0;
    if (!this.#tools[slot] || (this.#calls[slot] ?? 0) % 8 === 0) {
      const meter = this.toolCalls;
      this.#tools[slot] = await sourceTools(this.env, {
        orgId: input.orgId,
        projectId: input.projectId,
        sessionId: this.name,
        caller: { kind: "member", userId: input.userId, appId: null },
        profileTools: [input.ref],
        meter: unsettled
          ? ({
              open: (call: Parameters<typeof meter.open>[0]) => meter.open(call),
              markSent: (callId: string) => meter.markSent(callId),
              takeApproval: (callId: string) => meter.takeApproval(callId),
              close: async () => null,
              inFlight: meter.inFlight,
            } as unknown as typeof meter)
          : meter,
      });
    }
    this.#calls[slot] = (this.#calls[slot] ?? 0) + 1;
    const execute = this.#tools[slot]?.[input.tool]?.execute as unknown as Execute;
    await execute(input.args, { toolCallId: crypto.randomUUID(), messages: [] });
  }

  /**
   * One call through the source's client object only (the RPC, the identity token, the URL rule,
   * the guarded fetch), without the turn's ledger, record and framing: where Parley's time goes.
   */
  async benchClient(input: BenchCall): Promise<void> {
    if (!this.#row) {
      const sourceId = input.ref.split(":")[1] ?? "";
      [this.#row = null] = await sourcesOfOrg(this.env.DB, input.orgId, [sourceId]);
    }
    if (!this.#row) throw new Error("no source");
    const outcome = await sourceClient(this.env, this.#row.id).call({
      source: sourceRef(this.#row),
      tool: { name: input.tool, method: null, path: null },
      args: input.args,
      identity: {
        subject: input.userId,
        subjectKind: "member",
        orgId: input.orgId,
        appId: null,
        sessionId: this.name,
      },
      timeoutMs: 15_000,
      maxResponseBytes: 1024 * 1024,
    });
    if (!outcome.ok) throw new Error(outcome.message);
  }

  /** One call through the agents SDK's MCP client directly (connected once). */
  async benchDirect(input: BenchCall): Promise<void> {
    if (this.#direct === null) {
      await this.mcp.connect(input.url, {
        reconnect: { id: "bench-direct" },
        transport: { type: "streamable-http" },
      });
      this.#direct = "bench-direct";
    }
    const result = await this.mcp.callTool({
      serverId: this.#direct,
      name: input.tool,
      arguments: input.args,
    });
    if ((result as { isError?: boolean }).isError) throw new Error("direct call failed");
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/api/__bench/tool-call" && request.method === "POST") {
      const input = (await request.json()) as BenchCall & { mode: string; session: string };
      const stub = env.ASSISTANT_AGENT.get(
        env.ASSISTANT_AGENT.idFromName(input.session),
      ) as unknown as AssistantAgent;
      if (input.mode === "parley") await stub.benchParley(input);
      else if (input.mode === "unsettled") await stub.benchParley(input, true);
      else if (input.mode === "client") await stub.benchClient(input);
      else await stub.benchDirect(input);
      return new Response(null, { status: 204 });
    }
    return worker.fetch(request, env, ctx);
  },
};

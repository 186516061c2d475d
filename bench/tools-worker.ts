// Bench-only Worker: the whole platform, and one route that times a tool call two ways from inside
// a session's chat object, as a turn makes it: through Parley (`sourceTools`' execute: the
// identity token, the source's client object, the guarded fetch, the result framed, the call
// recorded and settled) and directly (the agents SDK's MCP client of the same object, connected
// to the same server, no token). Not deployed; bench/tools.mjs runs it under wrangler dev.
import type { ToolSet } from "ai";
import { AssistantAgent as PlatformAssistantAgent } from "../apps/worker/src/agents/assistant-agent.ts";
import worker from "../apps/worker/src/index.ts";
import { sourceTools } from "../apps/worker/src/tools/turn-tools.ts";

export {
  BillingAccount,
  DataExport,
  ErasureJob,
  OnboardingAgent,
  ToolSourceClient,
} from "../apps/worker/src/index.ts";

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
  #tools: ToolSet | null = null;
  #calls = 0;
  #direct: string | null = null;

  /** One call through Parley's path (the turn's tools are built once per 8 calls, as a turn would). */
  async benchParley(input: BenchCall): Promise<void> {
    if (!this.#tools || this.#calls % 8 === 0) {
      this.#tools = await sourceTools(this.env, {
        orgId: input.orgId,
        projectId: input.projectId,
        sessionId: this.name,
        caller: { kind: "member", userId: input.userId, appId: null },
        profileTools: [input.ref],
        meter: this.toolCalls,
      });
    }
    this.#calls++;
    const execute = this.#tools[input.tool]?.execute as unknown as Execute;
    await execute(input.args, { toolCallId: crypto.randomUUID(), messages: [] });
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
      else await stub.benchDirect(input);
      return new Response(null, { status: 204 });
    }
    return worker.fetch(request, env, ctx);
  },
};

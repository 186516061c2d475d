import type { EndUserLimits } from "@parley/billing";
import type { ToolSet } from "ai";
import { ToolCharges } from "../../tools/tool-charges.ts";
import type { ToolCallMeter } from "../../tools/tool-meter.ts";
import { type SourceToolsInput, sourceTools } from "../../tools/turn-tools.ts";
import type { AgentCaller } from "../caller.ts";
import { estimateTokens } from "../context.ts";

/** A turn's tools, and what their names, descriptions and schemas add to each of its prompts. */
export interface TurnTools {
  set: ToolSet;
  /** Tokens the tools add to a prompt (the first call's hold is sized with them). */
  promptTokens: number;
  /** What the turn's tool source calls are charged: its reply's `toolPriceMicros`. */
  charges: ToolCharges;
}

/**
 * The tool sources' tools a turn's profile switched on (`source:<id>:<tool>` among `names`), as
 * `sourceTools` builds them for this caller in this session (docs/2026-12-06-tools.md, "Wiring"),
 * and what they add to a prompt: a source's schemas may be large (16 KB each), so they are
 * measured rather than covered by the built-in tools' fixed allowance. No D1 read when the
 * profile names none.
 *
 * `endUserLimits` is asked when a priced call is held, not now: the turn's tools are built beside
 * the caller's access check, which is what reads those limits.
 */
export async function sourceToolsOf(
  env: Cloudflare.Env,
  input: {
    caller: AgentCaller;
    sessionId: string;
    names: readonly string[];
    meter: ToolCallMeter;
    endUserLimits?: () => EndUserLimits;
  },
): Promise<TurnTools> {
  const { caller } = input;
  const limits = input.endUserLimits;
  const charges = new ToolCharges();
  const toolInput: SourceToolsInput = {
    orgId: caller.orgId,
    projectId: caller.projectId,
    sessionId: input.sessionId,
    caller: { kind: caller.kind, userId: caller.userId, appId: caller.appId },
    profileTools: input.names,
    meter: input.meter,
    charges,
  };
  // A getter, read by each priced call when it is held (a spread would read it now).
  if (limits) Object.defineProperty(toolInput, "endUserLimits", { get: limits, enumerable: true });
  const set = await sourceTools(env, toolInput).catch((error: unknown) => {
    // The end user is gone (erased since the socket opened): no tool acts for nobody. The turn
    // itself is refused by the access check that runs beside this.
    if ((error as { code?: unknown }).code === "source_gone") return {} as ToolSet;
    throw error;
  });
  return { set, promptTokens: promptTokensOf(set), charges };
}

/** What a tool set's names, descriptions and argument schemas weigh in a prompt, in tokens. */
function promptTokensOf(set: ToolSet): number {
  const entries = Object.entries(set);
  if (entries.length === 0) return 0;
  return estimateTokens(
    JSON.stringify(
      entries.map(([name, tool]) => ({
        name,
        description: tool.description,
        // `jsonSchema(...)` over a plain object: its schema is that object, read synchronously.
        parameters: (tool.inputSchema as { jsonSchema?: unknown }).jsonSchema ?? null,
      })),
    ),
  );
}

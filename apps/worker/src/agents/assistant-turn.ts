import type { EndUserLimits } from "@parley/billing";
import type { ReplyVersion } from "@parley/shared";
import type { ToolSet, UIMessage } from "ai";
import type { ProjectRow } from "../auth/access.ts";
import { RETRIEVAL_PROMPT_TOKENS, type TurnKnowledge } from "../knowledge/turn-knowledge.ts";
import type { ToolCallMeter } from "../tools/tool-meter.ts";
import type { ReplyFigures } from "./assistant-replies.ts";
import type { AgentCaller } from "./caller.ts";
import { contextWindow, estimateTokens } from "./context.ts";
import { type CallLedger, MeteringMiddleware } from "./metering-middleware.ts";
import { revokeConnections } from "./revocation.ts";
import { assistantTools } from "./tools/project-tools.ts";
import { sourceToolsOf, type TurnTools } from "./tools/turn-tool-set.ts";
import type { TurnModel } from "./turn-model.ts";

/**
 * What an assistant turn is made of at admission (assistant-agent.ts): the turn's shape, its
 * metering, the first call's prompt estimate and its tools. Functions of their inputs, so the
 * agent's admission reads as the order it does them in.
 */

export interface AssistantTurn {
  caller: AgentCaller;
  project: ProjectRow;
  /**
   * The server's id for this turn: every hold and usage record of it is keyed `<turnId>:<n>`.
   * Never derived from the client's request id, which a client may reuse (after a clear, say).
   */
  turnId: string;
  /** What the turn runs with: the model, its prices and limits, its system prompt (the seam). */
  model: TurnModel;
  /**
   * The turn's metering: every call of the turn is reserved and settled by it. Its first call may
   * be reserved already (at admission, alongside the SDK storing the message).
   */
  metering: MeteringMiddleware;
  /** A regeneration: the replaced reply's versions, kept in the new reply (read at admission). */
  versions?: ReplyVersion[];
  /**
   * The turn's tools, built at admission (a tool approval's continuation builds them anew): what
   * the profile switched on, and what their schemas add to every prompt of the turn.
   */
  tools: TurnTools;
  /** The session's project's documents: the tool, retrieval before the first call, citations. */
  knowledge: TurnKnowledge;
  /**
   * A tool approval's continuation: the figures of the reply it goes on writing (the SDK
   * continues the same message), which its own are added to.
   */
  continues?: ReplyFigures;
}

/** Tool schemas and descriptions are sent with every call; this bounds what they add to a prompt. */
const TOOL_PROMPT_TOKENS = 400;

/** A turn's metering: the middleware its calls go through, paid by the caller's org. */
export function assistantMetering(input: {
  ledger: CallLedger;
  sessionId: string;
  caller: AgentCaller;
  turnId: string;
  model: TurnModel;
  tools: TurnTools;
  /** An end user's limits (read by the caller's access check); absent for a member. */
  endUserLimits: EndUserLimits | undefined;
}): MeteringMiddleware {
  const { caller, model, endUserLimits } = input;
  return new MeteringMiddleware({
    ledger: input.ledger,
    turnId: input.turnId,
    payer: {
      billable: true,
      orgId: caller.orgId,
      memberId: caller.userId,
      projectId: caller.projectId,
      sessionId: input.sessionId,
      ...(endUserLimits ? { endUserLimits } : {}),
    },
    prices: model.prices,
    maxOutputTokens: model.maxOutputTokens,
    toolPromptTokens: input.tools.promptTokens,
    generationLookup: model.model.provider.type === "openrouter",
  });
}

/**
 * The prompt a first call over `messages` shows the model, in tokens (system prompt, window, tools),
 * for a given model: the window is measured once, the project (and its prompt) may still change.
 */
export function firstCallEstimator(
  messages: readonly UIMessage[],
  contextTokens: number,
): (model: TurnModel, tools: TurnTools) => number {
  const window = contextWindow(messages, contextTokens);
  return (model, tools) =>
    estimateTokens(model.system(window.omitted)) +
    window.tokens +
    tools.promptTokens +
    (model.knowledgeRetrieval ? RETRIEVAL_PROMPT_TOKENS : 0);
}

/**
 * The tools the turn's profile switched on (the resolver gives a model without tool calling
 * none, an end user only the tool sources' and knowledge). The project's built-in tools are its
 * org's members' (its memory, its balance): an end user never gets them, whatever a profile
 * says. The tool sources' tools act for whoever chats, as them (tools/turn-tools.ts). The
 * documents' search is added per turn (`TurnKnowledge`), as it needs the turn's project.
 */
export async function assistantTurnTools(
  env: Cloudflare.Env,
  input: {
    caller: AgentCaller;
    sessionId: string;
    names: readonly string[];
    meter: ToolCallMeter;
    /** An end user's limits, asked when a priced call is held (turn-tool-set.ts). */
    endUserLimits: () => EndUserLimits;
    /** Forgets this session's kept access (the memory it holds changed). */
    forgetAccess: () => void;
  },
): Promise<TurnTools> {
  const { caller, sessionId, names } = input;
  const fromSources = await sourceToolsOf(env, {
    caller,
    sessionId,
    names,
    meter: input.meter,
    ...(caller.kind === "end_user" ? { endUserLimits: input.endUserLimits } : {}),
  });
  if (caller.kind === "end_user" || names.length === 0) {
    return {
      set: fromSources.set,
      promptTokens: TOOL_PROMPT_TOKENS + fromSources.promptTokens,
      charges: fromSources.charges,
    };
  }
  const all: ToolSet = assistantTools(env, caller, {
    // This session knows at once; the project's other chats hear it by a push.
    memoryChanged: () => {
      input.forgetAccess();
      return revokeConnections(env, { projectId: caller.projectId, except: sessionId });
    },
  });
  const builtIn = Object.fromEntries(
    names.flatMap((name) => (all[name] ? [[name, all[name]]] : [])),
  );
  return {
    set: { ...builtIn, ...fromSources.set },
    promptTokens: TOOL_PROMPT_TOKENS + fromSources.promptTokens,
    charges: fromSources.charges,
  };
}

/** A call refused mid-turn stops the tool loop with the refusal's code. */
export const stopCode = (reason: string): "insufficient_credits" | "spend_limit" =>
  reason === "spend_limit" ? "spend_limit" : "insufficient_credits";

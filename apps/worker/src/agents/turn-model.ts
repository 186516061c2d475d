/**
 * THE SEAM for assistant profiles and the model catalogue (issue 29): what model a turn runs with,
 * at what prices, within what limits, under what system prompt and with which tools. A turn is
 * resolved once, at admission, by the agent's `TurnResolver` (assistants/resolve.ts: the profile
 * version and the catalogue model, cached per agent, no D1 read on a steady turn), before the
 * turn's message is stored: a refusal (a model not allowed, retired or unknown; an end user or the
 * preview naming one) is an `invalid_request` and nothing is stored, called or charged. Then the
 * turn's `TurnModel` is built from what was resolved and the project as the turn sees it: the
 * first call's hold is sized from its prices and limits, and the metering middleware prices every
 * call of the turn with the same figures.
 * docs/2026-12-06-assistant-profiles.md, "How a turn resolves its profile and model".
 */
import type { StepPrices } from "@parley/billing";
import { AppError, type ReplyModel, type ReplyProfile } from "@parley/shared";
import type { UIMessage } from "ai";
import type { CatalogueModel } from "../assistants/catalogue-model.ts";
import { buildSystemPrompt } from "../assistants/prompt.ts";
import type { ResolvedTurn, TurnContext, TurnResolver } from "../assistants/resolve.ts";
import type { ProjectRow } from "../auth/access.ts";
import type { AgentCaller } from "./caller.ts";

/** What a turn runs with. */
export interface TurnModel {
  /** The provider's model id (OpenRouter's, or the endpoint's). */
  modelId: string;
  /** The catalogue entry: where the model is served (its provider), its name and limits. */
  model: CatalogueModel;
  /** What the reply's metadata names: the profile version and the model it ran with. */
  ranWith: { profile: ReplyProfile; model: ReplyModel };
  /** The model's prices and the org's markup (a free turn's markup is 0). */
  prices: StepPrices;
  /** The most one call may write: the profile's, within the model's maximum. Every call is held for it. */
  maxOutputTokens: number;
  temperature?: number;
  topP?: number;
  /**
   * The built-in tools the turn offers (the profile's; for end users only those meant for
   * everyone, knowledge; none in the preview).
   */
  tools: readonly string[];
  /** Search the project's documents before the first call (the profile's; never the preview). */
  knowledgeRetrieval: boolean;
  /**
   * The system prompt: Parley's scaffolding (the project's memory framed as data, the end-user
   * framing, its rules) around the profile's instructions, for a window that leaves `omitted`
   * messages out.
   */
  system(omitted: number): string;
}

/** The resolver's context for a caller's turn (identity from the verified caller, never a body). */
export function turnContext(
  caller: AgentCaller,
  audience: TurnContext["audience"],
  requestedModel?: string,
): TurnContext {
  return {
    orgId: caller.orgId,
    projectId: caller.projectId,
    sessionId: audience === "preview" ? null : caller.sessionId,
    callerKind: caller.kind,
    appId: caller.appId,
    audience,
    ...(requestedModel === undefined ? {} : { requestedModel }),
  };
}

/**
 * What a turn runs with (the profile version, the model and its prices), or the refusal as the
 * `AppError` the chat sends as a `parley_error` (`invalid_request`, `field: "model"`).
 */
export async function chooseTurn(resolver: TurnResolver, ctx: TurnContext): Promise<ResolvedTurn> {
  const resolution = await resolver.resolve(ctx);
  if (resolution.ok) return resolution.turn;
  const { refusal } = resolution;
  throw new AppError(refusal.code, refusal.message, {
    ...(refusal.model === null ? {} : { field: "model" }),
  });
}

/** An assistant session's turn (members and end users alike), billed at the model's prices. */
export function assistantTurnModel(
  turn: ResolvedTurn,
  context: { project: ProjectRow; caller: AgentCaller },
): TurnModel {
  return build(turn, turn.prices, context.project, "assistant", context.caller.kind);
}

/** A turn of the free onboarding preview: metered at the provider's cost, charged nothing. */
export function previewTurnModel(turn: ResolvedTurn, context: { project: ProjectRow }): TurnModel {
  return build(turn, { ...turn.prices, markupBps: 0 }, context.project, "preview", "member");
}

function build(
  turn: ResolvedTurn,
  prices: StepPrices,
  project: ProjectRow,
  audience: TurnContext["audience"],
  callerKind: TurnContext["callerKind"],
): TurnModel {
  const { profile, model } = turn;
  // Built once per window size: the prompt is asked for at admission (the hold) and again when the
  // turn streams, and escaping 16 KB of instructions and memory twice per turn is for nothing.
  let last: { omitted: number; text: string } | null = null;
  return {
    modelId: model.id,
    model,
    ranWith: {
      // A tenant's profile by its name at that version, so the reply's footer can say it.
      profile: {
        id: profile.id,
        version: profile.version,
        ...(profile.id === null ? {} : { name: profile.name }),
      },
      model: { id: model.id, name: model.displayName },
    },
    prices,
    maxOutputTokens: profile.maxOutputTokens,
    ...(profile.temperature === null ? {} : { temperature: profile.temperature }),
    ...(profile.topP === null ? {} : { topP: profile.topP }),
    tools: profile.tools,
    knowledgeRetrieval: profile.knowledgeRetrieval,
    system(omitted) {
      if (last?.omitted !== omitted) {
        const text = buildSystemPrompt({
          audience,
          callerKind,
          project: { name: project.name, memory: project.memory },
          instructions: profile.instructions,
          tools: profile.tools,
          omitted,
        });
        last = { omitted, text };
      }
      return last.text;
    },
  };
}

/**
 * The model the reply being continued ran with (a tool approval continues its turn): the same
 * model, so a loop's steps (and reasoning a provider carries between them) stay on one model even
 * if the session's pick changed meanwhile. Undefined when the reply does not say.
 */
export function continuedModel(messages: readonly UIMessage[]): string | undefined {
  const reply = messages.findLast((message) => message.role === "assistant");
  const model = (reply?.metadata as { model?: { id?: unknown } } | undefined)?.model?.id;
  return typeof model === "string" ? model : undefined;
}

/** Whether two models of a turn are held and priced alike (then an early hold still fits). */
export function sameMoney(a: TurnModel, b: TurnModel): boolean {
  return (
    a.modelId === b.modelId &&
    a.maxOutputTokens === b.maxOutputTokens &&
    a.prices.model === b.prices.model &&
    a.prices.markupBps === b.prices.markupBps &&
    a.prices.table === b.prices.table
  );
}

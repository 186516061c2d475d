/**
 * A turn's model call and its reply, the same for both agents: the turn's model wrapped in its
 * metering middleware, `streamText`, and the reply's stream as the SDK stores and sends it.
 * Nothing here handles money: the middleware reserves and settles every call.
 */
import {
  createUIMessageStreamResponse,
  type ModelMessage,
  stepCountIs,
  streamText,
  type ToolSet,
  wrapLanguageModel,
} from "ai";
import { deltaCoalescer, stagedStream } from "./coalesce.ts";
import type { MeteringMiddleware } from "./metering-middleware.ts";
import { languageModel } from "./model.ts";
import { announceFailure, endOfReplyStage, modelFailure, replyEnding } from "./reply-endings.ts";
import type { TurnModel } from "./turn-model.ts";

export interface TurnStreamInput<Metadata extends object> {
  env: Cloudflare.Env;
  metering: MeteringMiddleware;
  model: TurnModel;
  system: string;
  messages: ModelMessage[];
  tools?: ToolSet;
  /** The most calls a tool loop makes (1: no loop). */
  maxSteps?: number;
  abortSignal: AbortSignal | undefined;
  coalesceMs: number;
  /** The reply's metadata with its first chunk. */
  start: Metadata;
  /** A completed reply's metadata, asked just before its end (every call is settled by then). */
  completed: () => Metadata;
  /** What the client is told when the model stream fails for a reason it cannot act on. */
  fallbackErrorText: string;
  /** The chat's sockets, told of a failure the person can act on (a rate limit: when to retry). */
  agent: { broadcast(msg: string): void };
  requestId: string;
}

export interface TurnStream {
  response: Response;
  /** How the reply ended when it did not complete (`replyEnding`), asked when the SDK stores it. */
  ending(): { finish: "stopped" | "failed"; code?: string } | null;
}

export function streamTurn<Metadata extends object>(input: TurnStreamInput<Metadata>): TurnStream {
  const { model, metering, abortSignal } = input;
  /** The code of the error the model stream reported, if it did. */
  let failure: string | undefined;
  const result = streamText({
    model: wrapLanguageModel({
      // OpenRouter's provider or an OpenAI-compatible endpoint, as the catalogue entry says.
      model: languageModel(input.env, model.model),
      middleware: metering,
    }),
    system: input.system,
    messages: input.messages,
    ...(input.tools ? { tools: input.tools } : {}),
    maxOutputTokens: model.maxOutputTokens,
    ...(model.temperature !== undefined ? { temperature: model.temperature } : {}),
    ...(model.topP !== undefined ? { topP: model.topP } : {}),
    stopWhen: stepCountIs(input.maxSteps ?? 1),
    ...(abortSignal ? { abortSignal } : {}),
    maxRetries: 0,
    onError: ({ error }) => {
      failure ??= announceFailure(input.agent, input.requestId, error);
    },
  });
  const stream = result
    .toUIMessageStream({
      sendReasoning: true,
      messageMetadata: ({ part }) => (part.type === "start" ? input.start : undefined),
      // Our own errors (a tool refusing a write, say) are safe to show, and a rate limit says when
      // to try again; anything else stays generic.
      onError: (error) => modelFailure(error, input.fallbackErrorText).message,
    })
    // Coalescing and the reply's last touches, as one stream stage (coalesce.ts `stagedStream`).
    .pipeThrough(
      stagedStream(
        (emit) => deltaCoalescer(input.coalesceMs, emit),
        (emit) => endOfReplyStage(input.completed, emit),
      ),
    );
  return {
    response: createUIMessageStreamResponse({ stream }),
    ending: () => replyEnding(abortSignal, failure),
  };
}

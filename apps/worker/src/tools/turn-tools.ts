import type { EndUserLimits } from "@parley/billing";
import {
  modelToolName,
  newId,
  parseSourceToolRef,
  RESERVED_TOOL_NAMES,
  type SourceTool,
} from "@parley/shared";
import { jsonSchema, type ToolSet, tool } from "ai";
import { z } from "zod";
import { ToolCallError } from "./call-error.ts";
import { frameResult, mcpResultValue } from "./result-frame.ts";
import { toolSettings } from "./settings.ts";
import { type SourceCallOutcome, sourceClient } from "./source-client.ts";
import { type SourceRow, sourceRef, sourcesOfOrg, toolsOf } from "./sources-db.ts";
import type { ToolCharges } from "./tool-charges.ts";
import type { Answerer, CallOutcome, ToolCallMeter } from "./tool-meter.ts";

/** The person a turn's tools act for (the session's caller, as the Worker verified it). */
export interface ToolCaller {
  kind: "member" | "end_user";
  /** The member's user id, or the end user's `eu_` id. */
  userId: string;
  /** The end user's app; null for a member. */
  appId: string | null;
  /**
   * The end user's id in the tenant's product (the identity token's `sub`); looked up when
   * absent. Unused for a member (their user id is the subject).
   */
  externalId?: string | null;
}

export interface SourceToolsInput {
  orgId: string;
  projectId: string;
  /** The assistant session; null outside one (no source tools run there today). */
  sessionId: string | null;
  caller: ToolCaller;
  /** The turn's tools as the resolved profile names them; `source:<id>:<tool>` ones are built here. */
  profileTools: readonly string[];
  /** The chat object's tool call ledger (its SQLite): holds, settlements, approvals. */
  meter: ToolCallMeter;
  /** An end user's app limits: a priced call counts against them, as a model call does. */
  endUserLimits?: EndUserLimits;
  /** What the turn's calls are charged, for its reply's metadata (one per turn). */
  charges?: ToolCharges;
}

/**
 * The turn's tools from the org's tool sources: the ones its profile switched on
 * (`source:<sourceId>:<toolName>`), built as AI SDK tools. THE function the chat agents plug in
 * (docs/2026-12-06-tools.md "Wiring"): merge its result into the tools given to `streamText`.
 *
 * - A source of another org, a deleted one or a tool it no longer lists is not built (the
 *   profile's name is ignored): nobody reaches another org's source through a profile.
 * - A read tool runs when the model calls it. A write tool has `needsApproval`: the SDK asks the
 *   person in the chat and runs it only after their answer, with the arguments they saw (the
 *   transcript is the server's); its execute also takes the approval the frame guard noted for
 *   that very tool call id (`ToolCallMeter.takeApproval`), so a call nobody approved here, a
 *   denied one, or one that ran already never runs.
 * - Each call: at most `TOOL_CALLS_PER_TURN` per turn; its price held first (limits apply); the
 *   source's client object makes it with a fresh identity token for the caller; the result is
 *   framed as data and cut to size; a failure is a tool error with a clear message (the model and
 *   the person's card read it), never a 500; the call is charged once and recorded.
 */
export async function sourceTools(env: Env, input: SourceToolsInput): Promise<ToolSet> {
  const refs = input.profileTools.flatMap((name) => {
    const ref = parseSourceToolRef(name);
    return ref ? [ref] : [];
  });
  if (refs.length === 0) return {};
  const [rows, subject] = await Promise.all([
    sourcesOfOrg(
      env.DB,
      input.orgId,
      refs.map((ref) => ref.sourceId),
    ),
    subjectOf(env, input),
  ]);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const settings = toolSettings(env);
  const turn = { calls: 0 };
  // Built-in names are reserved, and a name two source tools would share goes to the first (the
  // resolver already left such a profile's later one out; profiles saved now cannot name it):
  // no tool ever runs under another's name, and the prompt names what the model is given.
  const taken = new Set(RESERVED_TOOL_NAMES);
  const tools: ToolSet = {};
  for (const ref of refs) {
    const row = byId.get(ref.sourceId);
    const found = row ? toolsOf(row).find((t) => t.name === ref.toolName && t.usable) : undefined;
    if (!row || !found) continue;
    const key = modelToolName(found.name);
    if (taken.has(key)) continue;
    taken.add(key);
    tools[key] = buildTool(env, input, { row, found, subject, settings, turn });
  }
  return tools;
}

/** The identity token's subject: the member's id, or the end user's id in the tenant's product. */
async function subjectOf(env: Env, input: SourceToolsInput): Promise<string> {
  if (input.caller.kind === "member") return input.caller.userId;
  if (input.caller.externalId) return input.caller.externalId;
  const row = await env.DB.prepare("SELECT external_id FROM end_users WHERE id = ? AND org_id = ?")
    .bind(input.caller.userId, input.orgId)
    .first<{ external_id: string }>();
  if (!row) throw new ToolCallError("source_gone", "This end user no longer exists");
  return row.external_id;
}

/** The arguments' JSON schema for the model, validated as zod reads it (unknown keys pass). */
function inputSchemaOf(schema: Record<string, unknown>) {
  let validator: z.ZodType | null = null;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    validator = null;
  }
  return jsonSchema<Record<string, unknown>>(schema as never, {
    validate: (value) => {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return { success: false, error: new Error("The arguments must be a JSON object") };
      }
      if (!validator) return { success: true, value: value as Record<string, unknown> };
      const parsed = validator.safeParse(value);
      return parsed.success
        ? { success: true, value: value as Record<string, unknown> }
        : { success: false, error: new Error(parsed.error.message.slice(0, 500)) };
    },
  });
}

function buildTool(
  env: Env,
  input: SourceToolsInput,
  context: {
    row: SourceRow;
    found: SourceTool;
    subject: string;
    settings: ReturnType<typeof toolSettings>;
    turn: { calls: number };
  },
) {
  const { row, found, subject, settings, turn } = context;
  const write = found.access === "write";
  return tool({
    description: `${found.description}\n(From ${row.name}${write ? "; the person is asked to approve each call" : ""}.)`,
    inputSchema: inputSchemaOf(found.inputSchema),
    // Neither is sent to the model. The AI SDK puts `metadata` on the call's stream parts
    // (`toolMetadata`), so the approval card names the source that will act, not only the tool;
    // the agents SDK (0.32) stores `title` on the transcript's part but drops `toolMetadata`, so
    // the title says it too, for the stored transcript and a card rebuilt from it after a reload.
    metadata: { source: row.name, sourceId: row.id },
    title: `${modelToolName(found.name)} on ${row.name}`,
    ...(write ? { needsApproval: true } : {}),
    execute: async (args: Record<string, unknown>, options) => {
      if (turn.calls >= settings.callsPerTurn) {
        throw new ToolCallError(
          "call_limit",
          `At most ${settings.callsPerTurn} tool calls may be made in one turn`,
        );
      }
      turn.calls++;
      let approvedBy: Answerer | null = null;
      if (write) {
        const approval = input.meter.takeApproval(options.toolCallId);
        if (!approval.ok) {
          throw new ToolCallError(
            approval.reason,
            approval.reason === "already_ran"
              ? "This call already ran once; it is not run again"
              : "This call was not approved in this chat, so it did not run",
          );
        }
        approvedBy = approval.by;
      }
      return runCall(env, input, { row, found, subject, settings, args, approvedBy, options });
    },
  });
}

async function runCall(
  env: Env,
  input: SourceToolsInput,
  call: {
    row: SourceRow;
    found: SourceTool;
    subject: string;
    settings: ReturnType<typeof toolSettings>;
    args: Record<string, unknown>;
    approvedBy: Answerer | null;
    options: { abortSignal?: AbortSignal | undefined };
  },
) {
  const { row, found, settings } = call;
  const startedAt = Date.now();
  const callId = newId("toolCall");
  const opened = await input.meter.open({
    record: {
      id: callId,
      orgId: input.orgId,
      sourceId: row.id,
      toolName: found.name,
      sessionId: input.sessionId,
      projectId: input.projectId,
      callerKind: input.caller.kind,
      callerId: input.caller.userId,
      appId: input.caller.appId,
      access: found.access,
      approvedBy: call.approvedBy?.id ?? null,
      priceMicros: row.price_micros,
      createdAt: Date.now(),
    },
    payer: {
      memberId: input.caller.userId,
      projectId: input.projectId,
      sessionId: input.sessionId,
      ...(input.endUserLimits ? { endUserLimits: input.endUserLimits } : {}),
    },
  });
  if (!opened.ok) {
    throw opened.reason === "spend_limit"
      ? new ToolCallError("spend_limit", "A spend limit stops this paid tool call")
      : new ToolCallError(
          "insufficient_credits",
          "The organization's credits do not cover this paid tool call",
        );
  }
  input.meter.markSent(callId);
  const pending: Promise<SourceCallOutcome> = sourceClient(env, row.id).call({
    source: sourceRef(row),
    tool: { name: found.name, method: found.method, path: found.path },
    args: call.args,
    identity: {
      subject: call.subject,
      subjectKind: input.caller.kind,
      orgId: input.orgId,
      appId: input.caller.appId,
      sessionId: input.sessionId,
    },
    timeoutMs: settings.timeoutMs,
    maxResponseBytes: settings.responseMaxBytes,
  });
  const stopped = stopOf(call.options.abortSignal);
  const close = (outcome: CallOutcome) => input.meter.close(callId, outcome);
  // Typed as the object's method says (the RPC stub's type loses the union's narrowing).
  const outcome = (await Promise.race([pending, stopped.promise])
    .catch((error: unknown) => {
      // The source's client object never throws: its RPC failed (the object was reset or
      // overloaded), and whether the request went out is unknown. Closed now as the server may
      // have acted (charged, as a reset mid-call is), not left open until this object restarts.
      const charged = close({ ...LOST, durationMs: Date.now() - startedAt });
      input.charges?.add(charged ?? 0);
      throw new ToolCallError("unreachable", "The tool's server could not be reached", {
        cause: error,
      });
    })
    .finally(stopped.dispose)) as SourceCallOutcome | "stopped";
  if (outcome === "stopped") {
    // The person stopped the reply: the reply ends now, and the call is closed once its answer
    // (or its timeout) comes: charged once if it went out, recorded as stopped. The reply's
    // settled figures wait for it (`ToolCharges.later`).
    const started = Date.now();
    const late = pending.then(
      (answer) =>
        close({
          status: "aborted",
          errorCode: "aborted",
          durationMs: answer.durationMs,
          requestBytes: answer.wire.requestBytes,
          responseBytes: answer.wire.responseBytes,
          wentOut: answer.wire.wentOut === true,
        }),
      () =>
        close({
          status: "aborted",
          errorCode: "aborted",
          durationMs: Date.now() - started,
          requestBytes: 0,
          responseBytes: 0,
        }),
    );
    input.charges?.later(late);
    void late.catch(() => undefined);
    throw new ToolCallError("aborted", "The call was stopped");
  }
  let value: unknown;
  let failure: ToolCallError | null = null;
  if (outcome.ok) {
    try {
      value =
        row.kind === "mcp"
          ? mcpResultValue(outcome.value)
          : (outcome.value as { body: unknown }).body;
    } catch (error) {
      failure =
        error instanceof ToolCallError
          ? error
          : new ToolCallError("malformed", "Unreadable result");
    }
  } else {
    failure = new ToolCallError(outcome.code, outcome.message);
  }
  // Closed here (one local write); settled and recorded off the reply's path, in a round.
  const charged = close({
    status: failure ? failure.status : "ok",
    errorCode: failure ? failure.code : null,
    durationMs: outcome.durationMs,
    requestBytes: outcome.wire.requestBytes,
    responseBytes: outcome.wire.responseBytes,
    wentOut: outcome.wire.wentOut === true,
  });
  input.charges?.add(charged ?? 0);
  if (failure) throw failure;
  return frameResult({
    source: row.name,
    tool: found.name,
    callId,
    value,
    maxBytes: settings.resultMaxBytes,
    approvedBy: call.approvedBy,
  });
}

/** How a call whose client object's RPC failed is recorded (its request may have gone out). */
const LOST = {
  status: "failed",
  errorCode: "unreachable",
  requestBytes: 0,
  responseBytes: 0,
} as const;

/** A promise that resolves "stopped" when the turn is aborted, and its listener's removal. */
function stopOf(signal: AbortSignal | undefined): {
  promise: Promise<"stopped">;
  dispose: () => void;
} {
  if (!signal) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let onAbort: () => void = () => undefined;
  const promise = new Promise<"stopped">((resolve) => {
    onAbort = () => resolve("stopped");
    if (signal.aborted) resolve("stopped");
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

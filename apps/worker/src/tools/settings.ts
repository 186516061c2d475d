import { z } from "zod";

/** How tool calls are bounded (wrangler.jsonc vars, docs/2026-12-06-tools.md), read once per env. */
export interface ToolSettings {
  /** A call that has not answered in this long fails as a timeout (the model is told). */
  timeoutMs: number;
  /** The most of a result the model is shown, in bytes of its JSON; the rest is cut with a note. */
  resultMaxBytes: number;
  /** The most Parley reads of one response at all: a larger one fails the call. */
  responseMaxBytes: number;
  /** Tool calls of sources one turn may make; more are refused to the model. */
  callsPerTurn: number;
  /** Failed calls in a row after which a source is shown unhealthy. */
  unhealthyAfter: number;
  /** A burst of `list_changed` within this long is one re-list (the MCP client's debounce). */
  listDebounceMs: number;
  /** A source's listener closes after this long without a call or a listing (0: never). */
  listenIdleMs: number;
  /** A server without the GET stream (405) is re-listed this often while active (0: never). */
  listenPollMs: number;
  /** The most one listener stream reads in its life; past it the stream is reopened. */
  listenStreamMaxBytes: number;
}

const schema = z.object({
  TOOL_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  TOOL_RESULT_MAX_BYTES: z.coerce.number().int().min(256).max(1_048_576).default(16_384),
  TOOL_RESPONSE_MAX_BYTES: z.coerce.number().int().min(1024).max(16_777_216).default(1_048_576),
  TOOL_CALLS_PER_TURN: z.coerce.number().int().min(1).max(100).default(8),
  TOOL_SOURCE_UNHEALTHY_AFTER: z.coerce.number().int().min(1).max(1000).default(3),
  TOOL_LIST_DEBOUNCE_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  TOOL_LISTEN_IDLE_MS: z.coerce.number().int().min(0).max(604_800_000).default(86_400_000),
  TOOL_LISTEN_POLL_MS: z.coerce.number().int().min(0).max(86_400_000).default(3_600_000),
  TOOL_LISTEN_STREAM_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(16_777_216)
    .default(1_048_576),
});

const cache = new WeakMap<object, ToolSettings>();

export function toolSettings(env: Env): ToolSettings {
  const known = cache.get(env);
  if (known) return known;
  const parsed = schema.parse(env);
  const value: ToolSettings = {
    timeoutMs: parsed.TOOL_CALL_TIMEOUT_MS,
    resultMaxBytes: parsed.TOOL_RESULT_MAX_BYTES,
    responseMaxBytes: Math.max(parsed.TOOL_RESPONSE_MAX_BYTES, parsed.TOOL_RESULT_MAX_BYTES),
    callsPerTurn: parsed.TOOL_CALLS_PER_TURN,
    unhealthyAfter: parsed.TOOL_SOURCE_UNHEALTHY_AFTER,
    listDebounceMs: parsed.TOOL_LIST_DEBOUNCE_MS,
    listenIdleMs: parsed.TOOL_LISTEN_IDLE_MS,
    listenPollMs: parsed.TOOL_LISTEN_POLL_MS,
    listenStreamMaxBytes: parsed.TOOL_LISTEN_STREAM_MAX_BYTES,
  };
  cache.set(env, value);
  return value;
}

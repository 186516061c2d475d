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
}

const schema = z.object({
  TOOL_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  TOOL_RESULT_MAX_BYTES: z.coerce.number().int().min(256).max(1_048_576).default(16_384),
  TOOL_RESPONSE_MAX_BYTES: z.coerce.number().int().min(1024).max(16_777_216).default(1_048_576),
  TOOL_CALLS_PER_TURN: z.coerce.number().int().min(1).max(100).default(8),
  TOOL_SOURCE_UNHEALTHY_AFTER: z.coerce.number().int().min(1).max(1000).default(3),
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
  };
  cache.set(env, value);
  return value;
}

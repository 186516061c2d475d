/**
 * Triggers: `[[...]]` markers in the last user message that steer the dev model (tool calls,
 * reasoning, a markdown reply, the prompt cache, faults, pacing). Pure module.
 *
 * A marker that does not parse (unknown name, bad number, tool arguments that are not a JSON
 * object, an unknown error type) is not a trigger: it stays in the text as plain words.
 */
import { type ErrorType, isErrorType } from "./errors.ts";

export type Trigger =
  | { readonly kind: "reasoning"; readonly encrypted?: true }
  | { readonly kind: "markdown" }
  | { readonly kind: "cache" }
  | { readonly kind: "tool"; readonly name: string; readonly arguments: string }
  | { readonly kind: "error"; readonly afterTokens: number }
  | { readonly kind: "error-type"; readonly errorType: ErrorType }
  | { readonly kind: "hang"; readonly afterTokens: number }
  | { readonly kind: "http-error"; readonly status: number }
  | { readonly kind: "retry-after"; readonly seconds: number }
  | { readonly kind: "latency"; readonly ms: number }
  | { readonly kind: "tps"; readonly tokensPerSecond: number }
  | { readonly kind: "tokens"; readonly count: number };

/** Tokens sent before the fault when `[[error]]` or `[[hang]]` carries no count. */
export const DEFAULT_FAULT_AFTER_TOKENS = 3;

const NAME = /^[a-z][a-z-]*/;
const TOOL_NAME = /^[A-Za-z0-9_.-]+/;
const CLOSE = "]]";

type Parsed = { trigger: Trigger; end: number };

/** Finds every trigger in `text` and returns them in order, with the text left once they are cut out. */
export function parseTriggers(text: string): { triggers: Trigger[]; text: string } {
  const triggers: Trigger[] = [];
  let out = "";
  let cursor = 0;
  let search = 0;
  for (;;) {
    const start = text.indexOf("[[", search);
    if (start < 0) break;
    const parsed = parseAt(text, start + 2);
    if (parsed === null) {
      search = start + 1;
      continue;
    }
    triggers.push(parsed.trigger);
    out += `${text.slice(cursor, start)} `;
    cursor = parsed.end;
    search = parsed.end;
  }
  out += text.slice(cursor);
  return { triggers, text: out };
}

/** `text` without its triggers. */
export function stripTriggers(text: string): string {
  return parseTriggers(text).text;
}

function parseAt(text: string, from: number): Parsed | null {
  const name = NAME.exec(text.slice(from))?.[0];
  if (name === undefined) return null;
  let pos = from + name.length;
  if (name === "tool") return parseTool(text, pos);
  let arg: string | undefined;
  if (text[pos] === ":") {
    const close = text.indexOf(CLOSE, pos + 1);
    if (close < 0) return null;
    arg = text.slice(pos + 1, close).trim();
    pos = close;
  }
  if (!text.startsWith(CLOSE, pos)) return null;
  const trigger = simpleTrigger(name, arg);
  return trigger === null ? null : { trigger, end: pos + CLOSE.length };
}

function simpleTrigger(name: string, arg: string | undefined): Trigger | null {
  switch (name) {
    case "reasoning":
      if (arg === undefined) return { kind: "reasoning" };
      return arg === "encrypted" ? { kind: "reasoning", encrypted: true } : null;
    case "markdown":
      return arg === undefined ? { kind: "markdown" } : null;
    case "cache":
      return arg === undefined ? { kind: "cache" } : null;
    case "error":
      if (arg === undefined) return { kind: "error", afterTokens: DEFAULT_FAULT_AFTER_TOKENS };
      return isErrorType(arg) ? { kind: "error-type", errorType: arg } : null;
    case "hang":
      return arg === undefined ? { kind: "hang", afterTokens: DEFAULT_FAULT_AFTER_TOKENS } : null;
    case "error-after": {
      const n = count(arg);
      return n === null ? null : { kind: "error", afterTokens: n };
    }
    case "hang-after": {
      const n = count(arg);
      return n === null ? null : { kind: "hang", afterTokens: n };
    }
    case "http-error": {
      const status = count(arg);
      return status === null || status < 400 || status > 599
        ? null
        : { kind: "http-error", status };
    }
    case "retry-after": {
      const seconds = count(arg);
      return seconds === null ? null : { kind: "retry-after", seconds };
    }
    case "latency": {
      const ms = count(arg);
      return ms === null ? null : { kind: "latency", ms };
    }
    case "tps": {
      const tps = count(arg);
      return tps === null ? null : { kind: "tps", tokensPerSecond: tps };
    }
    case "tokens": {
      const n = count(arg);
      return n === null ? null : { kind: "tokens", count: n };
    }
    default:
      return null;
  }
}

function count(arg: string | undefined): number | null {
  if (arg === undefined || !/^\d{1,9}$/.test(arg)) return null;
  return Number(arg);
}

/** `[[tool:<name>]]` or `[[tool:<name> <json object>]]`; the JSON may itself contain `]]`. */
function parseTool(text: string, from: number): Parsed | null {
  if (text[from] !== ":") return null;
  const name = TOOL_NAME.exec(text.slice(from + 1))?.[0];
  if (name === undefined) return null;
  let pos = skipSpace(text, from + 1 + name.length);
  let args = "{}";
  if (text[pos] === "{") {
    const end = jsonObjectEnd(text, pos);
    if (end < 0) return null;
    const raw = text.slice(pos, end);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return null;
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
    args = JSON.stringify(value);
    pos = skipSpace(text, end);
  }
  if (!text.startsWith(CLOSE, pos)) return null;
  return { trigger: { kind: "tool", name, arguments: args }, end: pos + CLOSE.length };
}

function skipSpace(text: string, pos: number): number {
  let p = pos;
  while (p < text.length && /\s/.test(text[p] ?? "")) p++;
  return p;
}

/** Index just past the `}` closing the object that opens at `start`, or -1. String-aware. */
function jsonObjectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

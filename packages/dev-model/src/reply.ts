/**
 * The dev model's deterministic text. A token is one whitespace-delimited word; streamed text is
 * the words joined by single spaces. Pure module: tests anywhere can predict a reply exactly.
 */
import { stripTriggers } from "./triggers.ts";

export const DEFAULT_REPLY_TOKENS = 24;
export const DEFAULT_REASONING_TOKENS = 8;
/** Words of the prompt (or tool result) echoed back at the start of a reply. */
export const ECHO_WORDS = 5;
/** An echoed word longer than this is cut (a tool result is often one long JSON "word"). */
export const ECHO_WORD_MAX_CHARS = 40;

const REPLY_HEAD = ["Dev", "model", "reply", "to:"];
const REASONING_HEAD = ["Thinking", "about:"];
const REASONING_ECHO_WORDS = 3;

const FILLER = [
  "amber",
  "anchor",
  "apple",
  "arch",
  "autumn",
  "basil",
  "beacon",
  "birch",
  "breeze",
  "brook",
  "cedar",
  "cinder",
  "clover",
  "comet",
  "copper",
  "coral",
  "crane",
  "dawn",
  "delta",
  "dune",
  "ember",
  "fern",
  "field",
  "flint",
  "frost",
  "garnet",
  "glade",
  "harbor",
  "hazel",
  "heron",
  "island",
  "ivory",
  "juniper",
  "lantern",
  "linen",
  "maple",
  "meadow",
  "mesa",
  "moss",
  "nectar",
  "oak",
  "opal",
  "orchard",
  "pebble",
  "pine",
  "prairie",
  "quartz",
  "raven",
  "reef",
  "ridge",
  "river",
  "saffron",
  "sage",
  "shore",
  "slate",
  "spruce",
  "stone",
  "summit",
  "thistle",
  "tide",
  "timber",
  "valley",
  "willow",
  "zephyr",
];

/** Whitespace-delimited words: the dev model's token. */
export function words(text: string): string[] {
  return text.split(/\s+/).filter((w) => w.length > 0);
}

/** FNV-1a over UTF-16 code units: stable, dependency-free, good enough to seed filler. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a tiny seeded PRNG, so filler depends on the seed text and nothing else. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function compose(
  head: readonly string[],
  echoSource: string,
  salt: string,
  count: number,
  echoWords: number,
): string[] {
  const source = words(echoSource);
  const echo = source
    .slice(0, echoWords)
    .map((w) => (w.length > ECHO_WORD_MAX_CHARS ? `${w.slice(0, ECHO_WORD_MAX_CHARS)}...` : w));
  const last = echo.length - 1;
  if (source.length > echoWords && last >= 0 && !echo[last]?.endsWith("...")) {
    echo[last] = `${echo[last]}...`;
  }
  const out = [...head, ...echo];
  const next = random(hash(`${salt}\u0000${source.join(" ")}`));
  while (out.length < count) out.push(FILLER[Math.floor(next() * FILLER.length)] ?? "dev");
  return out.slice(0, Math.max(0, count));
}

/**
 * Reply words for a last user message (triggers are removed first, so pacing or fault triggers do
 * not change the text): `Dev model reply to: <first 5 words>[...]` then seeded filler words, cut or
 * padded to `count` words.
 */
export function replyWords(lastUserMessage: string, count = DEFAULT_REPLY_TOKENS): string[] {
  return compose(REPLY_HEAD, stripTriggers(lastUserMessage), "reply", count, ECHO_WORDS);
}

/** Reasoning words: `Thinking about: <first 3 words>[...]` then seeded filler, `count` words. */
export function reasoningWords(
  lastUserMessage: string,
  count = DEFAULT_REASONING_TOKENS,
): string[] {
  return compose(
    REASONING_HEAD,
    stripTriggers(lastUserMessage),
    "reasoning",
    count,
    REASONING_ECHO_WORDS,
  );
}

/** Reply words after a tool result: `Dev model got tool result from <name>: <first 5 words>` + filler. */
export function toolResultWords(
  toolName: string,
  result: string,
  count = DEFAULT_REPLY_TOKENS,
): string[] {
  const head = ["Dev", "model", "got", "tool", "result", "from", `${toolName}:`];
  return compose(head, result, `tool-result\u0000${toolName}`, count, ECHO_WORDS);
}

/**
 * The text the dev model streams for a last user message, with no reasoning and no tool call.
 * `maxTokens` cuts it as `max_tokens` does (the reply then finishes with "length").
 */
export function devReply(
  lastUserMessage: string,
  options: { replyTokens?: number; maxTokens?: number } = {},
): string {
  const all = replyWords(lastUserMessage, options.replyTokens ?? DEFAULT_REPLY_TOKENS);
  return all.slice(0, options.maxTokens ?? all.length).join(" ");
}

/** The reasoning text streamed before the reply when reasoning is on. */
export function devReasoning(
  lastUserMessage: string,
  options: { reasoningTokens?: number } = {},
): string {
  return reasoningWords(lastUserMessage, options.reasoningTokens ?? DEFAULT_REASONING_TOKENS).join(
    " ",
  );
}

/** The text the dev model answers with when the last message is a tool result. */
export function devToolResultReply(
  toolName: string,
  result: string,
  options: { replyTokens?: number } = {},
): string {
  return toolResultWords(toolName, result, options.replyTokens ?? DEFAULT_REPLY_TOKENS).join(" ");
}

/**
 * The fixed reply to a `[[markdown]]` trigger: one document with a heading, a list, a GFM table
 * and a fenced code block, so a chat UI's markdown rendering can be checked against a real stream.
 * It is the only reply whose whitespace is not single spaces: markdown needs its line breaks.
 */
export const MARKDOWN_REPLY = [
  "## Dev model markdown",
  "",
  "A fixed reply for checking how a chat renders markdown:",
  "",
  "- **bold** item",
  "- item with `inline code`",
  "- third item",
  "",
  "| Plan | Seats | Price |",
  "| --- | --- | --- |",
  "| Free | 1 | $0 |",
  "| Team | 5 | $20 |",
  "",
  "```ts",
  "export function add(a: number, b: number): number {",
  "  return a + b;",
  "}",
  "```",
].join("\n");

/**
 * The `[[markdown]]` reply as streamed units, one token each: every word carries the whitespace
 * before it (newlines included), so the units joined are exactly `MARKDOWN_REPLY`.
 */
export function markdownWords(): string[] {
  return MARKDOWN_REPLY.match(/\s*\S+/g) ?? [];
}

/** The text the dev model streams for a `[[markdown]]` prompt; `maxTokens` cuts it. */
export function devMarkdownReply(options: { maxTokens?: number } = {}): string {
  const all = markdownWords();
  return all.slice(0, options.maxTokens ?? all.length).join("");
}

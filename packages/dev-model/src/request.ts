/**
 * The part of an OpenRouter chat completion request the dev model reads, validated from untrusted
 * JSON. Unknown fields are kept in `body` (and recorded) but otherwise ignored. Pure module.
 */
import { DEV_MODEL_ID } from "./pricing.ts";

export type ChatMessage = {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: unknown;
  readonly tool_call_id?: unknown;
  readonly name?: unknown;
  /** What an assistant message carries back of a reasoning model's earlier output. */
  readonly reasoning_details?: unknown;
  readonly cache_control?: unknown;
};

export type ChatRequest = {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly stream: boolean;
  /** The tighter of `max_tokens` and `max_completion_tokens`, if either is set. */
  readonly maxTokens: number | undefined;
  readonly tools: readonly unknown[] | undefined;
  readonly toolNames: ReadonlySet<string>;
  readonly toolChoice: unknown;
  readonly reasoning: unknown;
  readonly includeReasoning: unknown;
  /** `stream_options.include_usage`: how an OpenAI-compatible client asks for a streamed usage chunk. */
  readonly includeUsage: boolean;
  readonly user: string | undefined;
  readonly body: Readonly<Record<string, unknown>>;
};

export type ParseResult =
  | { readonly ok: true; readonly request: ChatRequest }
  | { readonly ok: false; readonly message: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function parseChatRequest(json: unknown): ParseResult {
  if (!isRecord(json)) return fail("Request body must be a JSON object");
  const { model, messages, stream, tools } = json;
  if (model !== undefined && (typeof model !== "string" || model.length === 0)) {
    return fail("model must be a non-empty string");
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    return fail("messages must be a non-empty array");
  }
  const parsedMessages: ChatMessage[] = [];
  for (const message of messages) {
    if (!isRecord(message) || typeof message.role !== "string") {
      return fail("each message must be an object with a string role");
    }
    parsedMessages.push({ ...message, role: message.role });
  }
  if (stream !== undefined && typeof stream !== "boolean") return fail("stream must be a boolean");
  let maxTokens: number | undefined;
  for (const key of ["max_tokens", "max_completion_tokens"] as const) {
    const value = json[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      return fail(`${key} must be a positive integer`);
    }
    maxTokens = maxTokens === undefined ? value : Math.min(maxTokens, value);
  }
  if (tools !== undefined && tools !== null && !Array.isArray(tools)) {
    return fail("tools must be an array");
  }
  const toolNames = new Set<string>();
  for (const tool of tools ?? []) {
    if (isRecord(tool) && tool.type === "function" && isRecord(tool.function)) {
      const name = tool.function.name;
      if (typeof name === "string") toolNames.add(name);
    }
  }
  return {
    ok: true,
    request: {
      model: model ?? DEV_MODEL_ID,
      messages: parsedMessages,
      stream: stream ?? false,
      maxTokens,
      tools: Array.isArray(tools) ? tools : undefined,
      toolNames,
      toolChoice: json.tool_choice,
      reasoning: json.reasoning,
      includeReasoning: json.include_reasoning,
      includeUsage: isRecord(json.stream_options) && json.stream_options.include_usage === true,
      user: typeof json.user === "string" ? json.user : undefined,
      body: json,
    },
  };
}

function fail(message: string): ParseResult {
  return { ok: false, message };
}

/** The text of a message's content: a string as is, the text parts of an array joined by "\n". */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === "text" && typeof part.text === "string") {
      texts.push(part.text);
    }
  }
  return texts.join("\n");
}

/** Characters counted for one message: content text, other parts and tool calls as JSON. */
export function messageChars(message: ChatMessage): number {
  let chars = 0;
  const { content } = message;
  if (typeof content === "string") chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content) {
      chars +=
        isRecord(part) && part.type === "text" && typeof part.text === "string"
          ? part.text.length
          : JSON.stringify(part ?? null).length;
    }
  }
  if (message.tool_calls !== undefined && message.tool_calls !== null) {
    chars += JSON.stringify(message.tool_calls).length;
  }
  return chars;
}

/**
 * Prompt tokens: `max(1, ceil(chars / 4))`, where chars (UTF-16 code units) sums every message's
 * text content, the JSON of its non-text parts and of its `tool_calls`, plus the JSON of `tools`.
 */
export function estimatePromptTokens(body: {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly unknown[] | undefined;
}): number {
  let chars = toolsChars(body.tools);
  for (const message of body.messages) chars += messageChars(message);
  return Math.max(1, Math.ceil(chars / 4));
}

/** Characters the `tools` of a request count for (its JSON, when it offers any). */
export function toolsChars(tools: readonly unknown[] | undefined): number {
  return tools !== undefined && tools.length > 0 ? JSON.stringify(tools).length : 0;
}

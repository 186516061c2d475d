import type { UIMessage } from "ai";

/** A rough token count: 4 characters a token, the same rule the dev model and our estimates use. */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/**
 * The newest messages that fit `maxTokens`, walking back from the end (so the cost is the window's,
 * not the history's), starting at a user message so the model never sees a reply or a tool result
 * without what led to it. The whole transcript stays stored; only the model's view is bounded.
 */
export function contextWindow(
  messages: readonly UIMessage[],
  maxTokens: number,
): { messages: UIMessage[]; omitted: number; tokens: number } {
  let tokens = 0;
  let start = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    const cost = messageTokens(messages[i] as UIMessage);
    if (tokens + cost > maxTokens && start < messages.length) break;
    tokens += cost;
    start = i;
  }
  while (start < messages.length - 1 && messages[start]?.role !== "user") {
    tokens -= messageTokens(messages[start] as UIMessage);
    start++;
  }
  return { messages: messages.slice(start), omitted: start, tokens };
}

/**
 * A stored message's estimate, kept per parts array (a turn reads the same stored messages again
 * and again; serializing each on every turn was the window's whole cost). A message whose parts
 * grew is estimated again.
 */
const estimates = new WeakMap<readonly unknown[], { parts: number; tokens: number }>();

export function messageTokens(message: UIMessage): number {
  const known = estimates.get(message.parts);
  if (known && known.parts === message.parts.length) return known.tokens;
  const tokens = estimateTokens(JSON.stringify(message.parts));
  estimates.set(message.parts, { parts: message.parts.length, tokens });
  return tokens;
}

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
): { messages: UIMessage[]; omitted: number } {
  let tokens = 0;
  let start = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    const cost = estimateTokens(JSON.stringify((messages[i] as UIMessage).parts));
    if (tokens + cost > maxTokens && start < messages.length) break;
    tokens += cost;
    start = i;
  }
  while (start < messages.length - 1 && messages[start]?.role !== "user") start++;
  return { messages: messages.slice(start), omitted: start };
}

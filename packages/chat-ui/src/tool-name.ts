import type { DynamicToolUIPart, ToolUIPart, UIMessage } from "ai";

/**
 * The AI SDK's `isToolUIPart` and `getToolName`, here so the views import only types from `ai`:
 * any value import pulls the SDK's module-level schemas into the embed's first open (~40 KB gzip).
 */
export const isToolPart = (
  part: UIMessage["parts"][number],
): part is ToolUIPart | DynamicToolUIPart =>
  part.type.startsWith("tool-") || part.type === "dynamic-tool";

/** A tool part's tool name: `dynamic-tool` carries it, a static part has it in its type. */
export const toolNameOf = (part: ToolUIPart | DynamicToolUIPart): string =>
  part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);

/**
 * The tool source a call goes to, when the tool is one; undefined for a built-in tool. The worker
 * sets `toolMetadata.source` (the source's name as the org registered it) on a source tool's
 * stream parts, and the title `<tool> on <source>`, which the stored transcript keeps (the agents
 * SDK drops `toolMetadata` there).
 */
export const toolSourceOf = (part: ToolUIPart | DynamicToolUIPart): string | undefined => {
  const { toolMetadata, title } = part as { toolMetadata?: unknown; title?: unknown };
  if (typeof toolMetadata === "object" && toolMetadata !== null) {
    const source = (toolMetadata as { source?: unknown }).source;
    if (typeof source === "string" && source !== "") return source;
  }
  const prefix = `${toolNameOf(part)} on `;
  return typeof title === "string" && title.startsWith(prefix) && title.length > prefix.length
    ? title.slice(prefix.length)
    : undefined;
};

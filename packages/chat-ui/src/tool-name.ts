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

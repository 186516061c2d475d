import { BUILT_IN_TOOLS } from "@parley/shared";

/**
 * The tool registry: which tool names a profile may switch on in an org. Today the built-in
 * tools (agents/tools/project-tools.ts; test/assistant-profiles.test.ts holds the two lists
 * equal); later issues add knowledge and the org's tool sources here, which is why a profile's
 * `tools` is an open list of names checked against this registry rather than a fixed enum.
 */
export interface ToolInfo {
  name: string;
  description: string;
  /** Who gets it: members only (an end user's session offers no built-in tool). */
  audience: "member";
}

const BUILT_IN: readonly ToolInfo[] = BUILT_IN_TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  audience: "member",
}));

/** The tools an org's profiles may name. */
export async function toolRegistry(_db: D1Database, _orgId: string): Promise<readonly ToolInfo[]> {
  return BUILT_IN;
}

/** Every built-in tool's name: a new profile's default. */
export const builtInToolNames = (): string[] => BUILT_IN.map((tool) => tool.name);

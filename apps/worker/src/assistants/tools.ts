import { BUILT_IN_TOOLS } from "@parley/shared";
import { orgToolRefs } from "../tools/sources-db.ts";

/**
 * The tool registry: which tool names a profile may switch on in an org. The built-in tools
 * (agents/tools/project-tools.ts; test/profiles.test.ts holds the two lists equal), and each
 * usable tool of the org's tool sources as `source:<sourceId>:<toolName>`
 * (docs/2026-12-06-tools.md), which is why a profile's `tools` is an open list of names checked
 * against this registry rather than a fixed enum.
 */
export interface ToolInfo {
  name: string;
  description: string;
  /**
   * Who gets it: built-in tools are the org's members' (an end user's session offers none);
   * a tool source's tools run for whoever chats, members and end users alike.
   */
  audience: "member" | "anyone";
}

const BUILT_IN: readonly ToolInfo[] = BUILT_IN_TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  audience: "member",
}));

/** The tools an org's profiles may name. */
export async function toolRegistry(db: D1Database, orgId: string): Promise<readonly ToolInfo[]> {
  const sources = await orgToolRefs(db, orgId);
  return [
    ...BUILT_IN,
    ...sources.map(
      (tool): ToolInfo => ({ name: tool.ref, description: tool.description, audience: "anyone" }),
    ),
  ];
}

/** Every built-in tool's name: a new profile's default. */
export const builtInToolNames = (): string[] => BUILT_IN.map((tool) => tool.name);

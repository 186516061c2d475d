import { BUILT_IN_TOOLS } from "@parley/shared";
import { SEARCH_KNOWLEDGE, SEARCH_KNOWLEDGE_DESCRIPTION } from "../knowledge/tool.ts";
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
   * Who gets it: members only (the project tools: an end user's session offers none of them),
   * or everyone the profile serves, end users included (knowledge: it reads only what the
   * project's admins published for its assistant; a tool source's tools act as whoever chats).
   */
  audience: "member" | "everyone";
}

const BUILT_IN: readonly ToolInfo[] = BUILT_IN_TOOLS.map((tool) => ({
  name: tool.name,
  description: tool.description,
  audience: "member",
}));

/**
 * Knowledge (issue 31, knowledge/tool.ts): `search_knowledge`, switched on per profile. Not a
 * default of new profiles (a profile names it to get it), and not in shared's `BUILT_IN_TOOLS`,
 * which lists the project tools of a member's session.
 */
const KNOWLEDGE: readonly ToolInfo[] = [
  { name: SEARCH_KNOWLEDGE, description: SEARCH_KNOWLEDGE_DESCRIPTION, audience: "everyone" },
];

/** The tools an org's profiles may name. */
export async function toolRegistry(db: D1Database, orgId: string): Promise<readonly ToolInfo[]> {
  const sources = await orgToolRefs(db, orgId);
  return [
    ...BUILT_IN,
    ...KNOWLEDGE,
    ...sources.map(
      (tool): ToolInfo => ({ name: tool.ref, description: tool.description, audience: "everyone" }),
    ),
  ];
}

/** Every built-in tool's name: a new profile's default. */
export const builtInToolNames = (): string[] => BUILT_IN.map((tool) => tool.name);

/** Tools an end user's session may offer too, when its profile switches them on. */
export const END_USER_TOOLS: ReadonlySet<string> = new Set(
  KNOWLEDGE.filter((tool) => tool.audience === "everyone").map((tool) => tool.name),
);

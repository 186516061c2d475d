import { modelLabels } from "../assistants/catalogue.ts";

/** What a usage key of a tool call is filed under: `tool:<sourceId>:<tool>` (tools/tool-meter.ts). */
const TOOL_KEY = /^tool:([^:]+):(.+)$/;

/** A tool call's usage key read back: its source and tool, or null for a model call's key. */
export function toolOfUsageKey(key: string): { sourceId: string; name: string } | null {
  const match = TOOL_KEY.exec(key);
  return match?.[1] && match[2] ? { sourceId: match[1], name: match[2] } : null;
}

/** The label of a tool call whose source has been deleted since (its id is all that is left). */
export const REMOVED_SOURCE = "Removed tool source";

/**
 * The display name of each key usage is filed under: a model's catalogue name (its id once it is
 * no longer listed), and for a tool call "<source name> · <tool>" from the org's tool sources,
 * looked up in one D1 query per page. Without this the billing screens showed the raw
 * `tool:tsrc_…:order_status` under "Model" (the outside probe of 2026-12-06). A deleted source
 * reads "Removed tool source · <tool>": its name is gone, the call and its price are not.
 */
export async function usageModelLabels(env: Env, orgId: string): Promise<(key: string) => string> {
  const [model, sources] = await Promise.all([
    modelLabels(env),
    env.DB.prepare("SELECT id, name FROM tool_sources WHERE org_id = ?")
      .bind(orgId)
      .all<{ id: string; name: string }>(),
  ]);
  const names = new Map(sources.results.map((row) => [row.id, row.name]));
  return (key) => {
    const tool = toolOfUsageKey(key);
    if (!tool) return model(key);
    return `${names.get(tool.sourceId) ?? REMOVED_SOURCE} · ${tool.name}`;
  };
}

import { toolSettings } from "../tools/settings.ts";
import {
  CALL_COLUMNS,
  type CallRow,
  SOURCE_COLUMNS,
  type SourceRow,
  toToolCall,
  toToolSource,
} from "../tools/sources-db.ts";
import { all } from "./read.ts";
import type { ExportRow } from "./sections.ts";

/**
 * The tool sections of an archive (issue 30, docs/2026-12-06-tools.md): a person's tool calls
 * (`toolCalls` of an account archive: the calls made for them, in every org), an org's tool
 * sources (`toolSources`: their definitions as the API shows them, the credential's header and
 * never its value) and all its calls (`toolCalls` of an org archive). A call's record holds no
 * arguments or results: those are in the session's transcript, in `sessions`.
 */
export const TOOL_SECTIONS = new Set(["toolSources", "toolCalls"]);

export async function readToolSection(env: Env, row: ExportRow, section: string): Promise<unknown> {
  const db = env.DB;
  if (section === "toolSources") {
    const sources = await all<SourceRow>(
      db,
      `SELECT ${SOURCE_COLUMNS} FROM tool_sources WHERE org_id = ? ORDER BY id`,
      row.org_id,
    );
    // Only an org's archive has this section, and only its owners ask for one.
    return sources.map((source) =>
      toToolSource(source, toolSettings(env).unhealthyAfter, { errorText: true }),
    );
  }
  const calls =
    row.kind === "org"
      ? await all<CallRow>(
          db,
          `SELECT ${CALL_COLUMNS} FROM tool_calls WHERE org_id = ? ORDER BY id`,
          row.org_id,
        )
      : await all<CallRow>(
          db,
          `SELECT ${CALL_COLUMNS} FROM tool_calls WHERE caller_id = ? ORDER BY id`,
          row.subject_user_id,
        );
  return calls.map((call) => ({ orgId: call.org_id, ...toToolCall(call) }));
}

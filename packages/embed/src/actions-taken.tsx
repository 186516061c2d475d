import { formatMicros } from "@parley/chat-ui/format";
import type { EmbedClient, EndUserToolCall } from "@parley/embed-core";
import { useEffect, useState } from "react";

/** How a call ended, for the end user. */
const ENDED: Record<EndUserToolCall["status"], string> = {
  ok: "done",
  tool_error: "failed",
  timeout: "timed out",
  failed: "failed",
  refused: "not run",
  aborted: "stopped",
};

/**
 * A records round lands a call's record a moment after the turn ends (at most 2 s after the
 * call closed, docs/2026-12-06-tools.md): read once at the turn's end and once after this.
 */
const SETTLED_AFTER_MS = 2_500;

/**
 * "Actions taken": what the assistant did in the tenant's product for the end user in this chat
 * (`GET /api/embed/sessions/:id/tool-calls`), each tool with its source, how it ended and whether
 * they approved it; the price only where the app shows cost. Read on open and after each turn; a
 * chat without calls, or a failed read, shows nothing.
 */
export function ActionsTaken({
  client,
  sessionId,
  turnsEnded,
  showCost,
}: {
  client: EmbedClient;
  sessionId: string;
  /** Changes as each turn ends. */
  turnsEnded: number;
  showCost: boolean;
}) {
  const [calls, setCalls] = useState<EndUserToolCall[]>([]);
  useEffect(() => {
    let live = true;
    void turnsEnded;
    const read = () =>
      void client.toolCalls(sessionId).then((result) => {
        if (live && result.ok) setCalls(result.data.items);
      });
    read();
    const later = turnsEnded > 0 ? setTimeout(read, SETTLED_AFTER_MS) : undefined;
    return () => {
      live = false;
      clearTimeout(later);
    };
  }, [client, sessionId, turnsEnded]);
  if (calls.length === 0) return null;
  return (
    <details
      data-testid="actions-taken"
      className="mb-2 rounded-md border border-border px-3 py-2 text-xs"
    >
      <summary className="cursor-pointer text-muted-foreground">
        Actions taken ({calls.length})
      </summary>
      <ul className="mt-1 grid gap-1">
        {calls.map((call) => (
          // A tool's name can be long with no space to break at (the approval card's rule).
          <li key={call.id} className="[overflow-wrap:anywhere]">
            <code>{call.toolName}</code>
            {call.sourceName ? ` (${call.sourceName})` : ""}: {ENDED[call.status]}
            {call.approved ? ", approved by you" : ""}
            {showCost && call.priceMicros > 0 ? `, ${formatMicros(call.priceMicros)}` : ""}
          </li>
        ))}
      </ul>
    </details>
  );
}

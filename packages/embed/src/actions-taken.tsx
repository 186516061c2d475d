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

/** Calls by id, newest first (a re-read first page and the older pages overlap). */
const merged = (...lists: EndUserToolCall[][]): EndUserToolCall[] => {
  const byId = new Map<string, EndUserToolCall>();
  for (const list of lists) for (const call of list) byId.set(call.id, call);
  return [...byId.values()].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
};

const moreButton =
  "mt-1 rounded-md px-2 py-1 text-muted-foreground outline-none hover:bg-accent hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring disabled:opacity-60";

/**
 * "Actions taken": what the assistant did in the tenant's product for the end user in this chat
 * (`GET /api/embed/sessions/:id/tool-calls`), each tool with its source, how it ended and whether
 * they approved it; the price only where the app shows cost. The newest page is read on open and
 * after each turn; "Show more" reads the older pages (the API's cursor), which stay while the
 * newest page is read again. A chat without calls, or a failed first read, shows nothing.
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
  const [newest, setNewest] = useState<{ items: EndUserToolCall[]; next: string | null }>({
    items: [],
    next: null,
  });
  // Older pages read with "Show more", and where the next one starts (undefined: none read yet).
  const [older, setOlder] = useState<{ items: EndUserToolCall[]; next: string | null }>();
  const [loading, setLoading] = useState(false);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    void turnsEnded;
    const read = () =>
      void client.toolCalls(sessionId).then((result) => {
        if (live && result.ok) {
          setNewest({ items: result.data.items, next: result.data.nextCursor });
        }
      });
    read();
    const later = turnsEnded > 0 ? setTimeout(read, SETTLED_AFTER_MS) : undefined;
    return () => {
      live = false;
      clearTimeout(later);
    };
  }, [client, sessionId, turnsEnded]);
  // Another chat's calls are not this one's older pages.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the session changes
  useEffect(() => setOlder(undefined), [sessionId]);
  const calls = merged(newest.items, older?.items ?? []);
  const next = older ? older.next : newest.next;
  if (calls.length === 0) return null;
  const showMore = async () => {
    if (next === null) return;
    setLoading(true);
    setFailed(false);
    const result = await client.toolCalls(sessionId, { cursor: next });
    setLoading(false);
    if (!result.ok) {
      setFailed(true);
      return;
    }
    setOlder((before) => ({
      items: merged(before?.items ?? [], result.data.items),
      next: result.data.nextCursor,
    }));
  };
  return (
    <details
      data-testid="actions-taken"
      className="mb-2 rounded-md border border-border px-3 py-2 text-xs"
    >
      <summary className="cursor-pointer text-muted-foreground">
        Actions taken ({calls.length}
        {next === null ? "" : "+"})
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
      {failed ? (
        <p role="alert" className="mt-1 text-destructive">
          The older actions could not be read. Try again.
        </p>
      ) : null}
      {next === null ? null : (
        <button type="button" className={moreButton} disabled={loading} onClick={showMore}>
          {loading ? "Loading…" : "Show more"}
        </button>
      )}
    </details>
  );
}

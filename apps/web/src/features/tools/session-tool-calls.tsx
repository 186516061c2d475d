import { formatMicros } from "@parley/chat-ui";
import type { Member, ToolCall, ToolSource } from "@parley/shared";
import { Wrench } from "lucide-react";
import { useState } from "react";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { useAllMembers, useWholeList } from "../../lib/org-lists.ts";
import { useSession } from "../../lib/session.tsx";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import { usePaged } from "../../lib/use-paged.ts";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "medium" });

/** How a call ended, in words and a badge tone. */
export const STATUS_WORDS: Record<
  ToolCall["status"],
  { label: string; tone: "success" | "danger" | "warning" | "neutral" }
> = {
  ok: { label: "Done", tone: "success" },
  tool_error: { label: "Tool error", tone: "danger" },
  timeout: { label: "Timed out", tone: "danger" },
  failed: { label: "Failed", tone: "danger" },
  refused: { label: "Refused", tone: "warning" },
  aborted: { label: "Stopped", tone: "warning" },
};

/** One call as the list shows it: names instead of ids. */
export interface CallLine {
  id: string;
  tool: string;
  source: string;
  at: string;
  duration: string;
  status: ToolCall["status"];
  errorCode: string | null;
  approvedBy: string | null;
  price: string;
}

/**
 * The session's calls with their source's and approver's names (a deleted source, a former
 * member: said so, never an id to guess from). Pure, for the list and its test.
 */
export function callLines(
  calls: readonly ToolCall[],
  sources: readonly Pick<ToolSource, "id" | "name">[],
  members: readonly Pick<Member, "userId" | "name" | "email">[],
  meId: string | undefined,
): CallLine[] {
  const sourceName = new Map(sources.map((source) => [source.id, source.name]));
  const memberName = new Map(members.map((member) => [member.userId, member.name || member.email]));
  const approver = (id: string | null) => {
    if (id === null) return null;
    if (id === meId) return "you";
    if (id.startsWith("eu_")) return "the end user";
    return memberName.get(id) ?? "a former member";
  };
  return calls.map((call) => ({
    id: call.id,
    tool: call.toolName,
    source: sourceName.get(call.sourceId) ?? "a deleted source",
    at: when.format(new Date(call.createdAt)),
    duration:
      call.durationMs < 1000 ? `${call.durationMs} ms` : `${(call.durationMs / 1000).toFixed(1)} s`,
    status: call.status,
    errorCode: call.errorCode,
    approvedBy: approver(call.approvedBy),
    price: call.priceMicros === 0 ? "free" : formatMicros(call.priceMicros),
  }));
}

/**
 * The tool calls of a chat (`GET /api/sessions/:id/tool-calls`), from the session's header: tool,
 * source, when, how long, how it ended, who approved a write and its price. Never arguments or
 * results (the transcript shows them). Read again each time it opens: a call's record lands a
 * moment after the call ends.
 */
export function SessionToolCalls({ sessionId, orgId }: { sessionId: string; orgId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button variant="ghost" size="icon" aria-label="Tool calls">
          <Wrench aria-hidden="true" />
        </Button>
      </DialogTrigger>
      <DialogContent
        title="Tool calls"
        description="What the assistant did in your tools during this chat. A call shows here a moment after it ends."
      >
        {open ? <CallList sessionId={sessionId} orgId={orgId} /> : null}
      </DialogContent>
    </Dialog>
  );
}

function CallList({ sessionId, orgId }: { sessionId: string; orgId: string }) {
  const { me } = useSession();
  // Read again while the list is open: a call's record lands a moment after the call ends.
  const calls = usePaged(
    ["session", sessionId, "tool-calls"],
    (cursor) => toolsApi.sessionCalls(sessionId, cursor),
    { refetchInterval: 3_000 },
  );
  const sources = useWholeList(toolSourcesKey(orgId), (cursor) => toolsApi.sources(orgId, cursor));
  const members = useAllMembers(orgId);
  // A call names its source and approver from the org's lists: shown before those answered, it
  // would say "a deleted source" or "a former member" of one that exists. So nothing shows until
  // all three have answered, and a failure of any is said as one.
  const error = calls.firstPageError ?? sources.whole.error ?? members.whole.error;
  if (error) {
    const retry = () => {
      if (calls.firstPageError) void calls.query.refetch();
      if (sources.whole.error) void sources.query.refetch();
      if (members.whole.error) void members.query.refetch();
    };
    return <ErrorNote error={error} retry={retry} />;
  }
  if (calls.query.isPending || sources.whole.loading || members.whole.loading) {
    return <Loading label="Loading tool calls…" />;
  }
  if (calls.items.length === 0) {
    return (
      <EmptyState icon={<Wrench />} title="No tool calls yet">
        Tools switched on in the assistant's profile show here once it calls them.
      </EmptyState>
    );
  }
  const lines = callLines(calls.items, sources.items, members.items, me?.id);
  return (
    <div className="grid gap-3">
      <ul
        className="grid divide-y divide-border rounded-md border border-border"
        aria-label="Tool calls"
      >
        {lines.map((line) => {
          const status = STATUS_WORDS[line.status];
          return (
            <li key={line.id} className="grid gap-1 px-3 py-2 text-sm">
              <span className="flex flex-wrap items-center gap-2">
                <code className="break-all font-medium font-mono">{line.tool}</code>
                <span className="text-muted-foreground">from {line.source}</span>
                <Badge tone={status.tone}>
                  {status.label}
                  {line.errorCode && line.status !== "ok" ? ` (${line.errorCode})` : ""}
                </Badge>
              </span>
              <span className="text-muted-foreground text-xs">
                {line.at} · {line.duration} · {line.price}
                {line.approvedBy ? ` · approved by ${line.approvedBy}` : ""}
              </span>
            </li>
          );
        })}
      </ul>
      <LoadMore more={calls.more} label="More tool calls" />
    </div>
  );
}

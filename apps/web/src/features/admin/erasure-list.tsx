import { Check, CircleAlert, Copy, Eraser, LoaderCircle, Minus } from "lucide-react";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import type { ErasureRequest, ErasureStep } from "../../lib/api.ts";
import { cn } from "../../lib/cn.ts";
import { dataRightsApi } from "../../lib/data-rights-api.ts";
import { useAllMembers } from "../../lib/org-lists.ts";
import { keys } from "../../lib/query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { memberName } from "../members/member-rules.ts";
import { useErasureLabels } from "./erasure-labels.ts";
import {
  isActive,
  progress,
  statusWords,
  stepStatusWords,
  stepWords,
  subjectWords,
} from "./erasure-words.ts";

/** How often the list refreshes while a request is still pending or running. */
export const POLL_MS = 2_000;

const timeFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });
const when = (iso: string) => timeFormat.format(new Date(iso));

const typeWords: Record<string, string> = {
  member: "Member",
  project: "Project",
  session: "Session",
  account: "Account",
};

/**
 * The org's erasure requests, newest first: what each erased in words, who filed it and when, and
 * its steps store by store. It refreshes every POLL_MS while any is pending or running.
 */
export function ErasureList({ orgId, meId }: { orgId: string; meId: string | undefined }) {
  const [polling, setPolling] = useState(false);
  const { query, items, more, firstPageError } = usePaged(
    keys.erasures(orgId),
    (cursor) => dataRightsApi.erasureRequests(orgId, cursor),
    { refetchInterval: polling ? POLL_MS : false },
  );
  const active = items.some(isActive);
  useEffect(() => setPolling(active), [active]);
  const { labels } = useErasureLabels(orgId);
  const members = useAllMembers(orgId);
  const names = new Map(members.items.map((member) => [member.userId, memberName(member)]));
  const filer = (userId: string | null) =>
    userId === null
      ? "a former member"
      : userId === meId
        ? "you"
        : (names.get(userId) ?? "a former member");
  // Who filed each request is named from the members: shown before every page of them answered,
  // a member on a later page would read "a former member". The list waits for both.
  const loadError = firstPageError ?? members.whole.error;
  const retry = () => {
    if (firstPageError) void query.refetch();
    if (members.whole.error) void members.query.refetch();
  };

  return (
    <Card aria-labelledby="erasure-requests-title" className="min-w-0 self-start">
      <CardHeader
        id="erasure-requests-title"
        title="Erasure requests"
        description="Newest first. Names show only in the tab that filed the request: Parley keeps a hash of the subject, not who or what it was."
      />
      <CardBody className="grid gap-3">
        {loadError ? (
          <ErrorNote error={loadError} retry={retry} />
        ) : query.isPending || members.whole.loading ? (
          <Loading label="Loading erasure requests…" />
        ) : items.length === 0 ? (
          <EmptyState icon={<Eraser />} title="No erasure requests yet.">
            A request you file shows here with each store it clears.
          </EmptyState>
        ) : (
          <ul className="grid gap-3">
            {items.map((request) => (
              <RequestItem
                key={request.id}
                request={request}
                subject={subjectWords(request.subject.type, labels[request.id])}
                filedBy={filer(request.requestedBy)}
              />
            ))}
          </ul>
        )}
        <LoadMore more={more} label="Older requests" />
      </CardBody>
    </Card>
  );
}

function RequestItem({
  request,
  subject,
  filedBy,
}: {
  request: ErasureRequest;
  subject: string;
  filedBy: string;
}) {
  const status = statusWords[request.status];
  const { done, total } = progress(request);
  const type = typeWords[request.subject.type] ?? "Subject";
  const titleId = `erasure-${request.id}`;
  return (
    <li
      aria-labelledby={titleId}
      className="grid gap-3 rounded-lg border border-border bg-background p-4"
    >
      <div className="flex flex-wrap items-start justify-between gap-2">
        <div className="grid min-w-0 gap-0.5">
          <span className="text-muted-foreground text-xs uppercase tracking-wide">{type}</span>
          <h3 id={titleId} className="wrap-anywhere font-medium">
            {subject}
          </h3>
        </div>
        <Badge tone={status.tone}>{status.label}</Badge>
      </div>
      <p className="text-muted-foreground text-sm">
        Filed {when(request.createdAt)} by {filedBy}
        {request.completedAt ? ` · completed ${when(request.completedAt)}` : ""}
      </p>
      {request.reason ? (
        <p className="wrap-anywhere text-sm">
          <span className="text-muted-foreground">Reason: </span>
          {request.reason}
        </p>
      ) : null}
      {isActive(request) ? (
        <div className="grid gap-1">
          <div
            role="progressbar"
            aria-label={`Progress of the erasure of ${subject}`}
            aria-valuemin={0}
            aria-valuemax={total}
            aria-valuenow={done}
            aria-valuetext={`${done} of ${total} steps`}
            className="h-1.5 overflow-hidden rounded-full bg-muted"
          >
            <div
              className="h-full rounded-full bg-primary transition-[width]"
              style={{ width: `${total === 0 ? 0 : Math.round((done / total) * 100)}%` }}
            />
          </div>
          <span className="text-muted-foreground text-xs">
            {done} of {total} steps
          </span>
        </div>
      ) : null}
      <ol aria-label={`Steps of the erasure of ${subject}`} className="grid gap-1.5 text-sm">
        {request.steps.map((step, index) => (
          <StepRow
            key={step.name}
            step={step}
            label={stepWords(step.name, request.subject.type)}
            // The first waiting step of a running job is the one under way.
            current={
              request.status === "running" &&
              step.status === "pending" &&
              request.steps.findIndex((candidate) => candidate.status === "pending") === index
            }
          />
        ))}
      </ol>
      <details className="text-sm">
        <summary className="cursor-pointer text-muted-foreground">Details for support</summary>
        <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-xs">
          <dt className="text-muted-foreground">Legal basis</dt>
          <dd>{request.legalBasis}</dd>
          <dt className="text-muted-foreground">Request</dt>
          <dd className="flex min-w-0 items-center gap-2">
            <code className="break-all">{request.id}</code>
            <CopyId id={request.id} />
          </dd>
          <dt className="text-muted-foreground">Attempts</dt>
          <dd>{request.attempts}</dd>
          {request.steps
            .filter((step) => step.detail)
            .map((step) => (
              <StepDetail key={step.name} step={step} subjectType={request.subject.type} />
            ))}
        </dl>
      </details>
    </li>
  );
}

function StepDetail({ step, subjectType }: { step: ErasureStep; subjectType: string }) {
  return (
    <>
      <dt className="text-muted-foreground">{stepWords(step.name, subjectType)}</dt>
      <dd className="wrap-anywhere">{step.detail}</dd>
    </>
  );
}

function StepRow({ step, label, current }: { step: ErasureStep; label: string; current: boolean }) {
  const icon =
    step.status === "done" ? (
      <Check className="text-success" />
    ) : step.status === "failed" ? (
      <CircleAlert className="text-destructive" />
    ) : step.status === "skipped" ? (
      <Minus className="text-muted-foreground" />
    ) : current ? (
      <LoaderCircle className="animate-spin text-primary" />
    ) : (
      <span className="block size-2 rounded-full bg-border" />
    );
  return (
    <li className="flex items-center gap-2">
      <span aria-hidden="true" className="grid size-4 shrink-0 place-items-center [&_svg]:size-4">
        {icon}
      </span>
      <span className="min-w-0 flex-1">{label}</span>
      <span
        className={cn(
          "shrink-0 text-xs",
          step.status === "failed" ? "text-destructive" : "text-muted-foreground",
        )}
      >
        {current ? "In progress" : stepStatusWords[step.status]}
      </span>
    </li>
  );
}

function CopyId({ id }: { id: string }) {
  async function copy() {
    try {
      await navigator.clipboard.writeText(id);
      toast.success("Request id copied.");
    } catch {
      toast.error("Could not copy: select the id instead.");
    }
  }
  return (
    <Button size="icon" variant="ghost" aria-label="Copy request id" onClick={() => void copy()}>
      <Copy aria-hidden="true" />
    </Button>
  );
}

import type { DataExport, Page } from "@parley/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";

/** How often a running export's progress is read again. */
export const EXPORT_POLL_MS = 1_500;

const running = (job: DataExport | undefined) =>
  job?.status === "pending" || job?.status === "running";

function formatSize(bytes: number | null): string {
  if (bytes === null) return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Starts a data export (GDPR Art. 15 and 20), shows its progress while it runs (polling) and,
 * once done, the download link with when it expires. The newest export is the one shown: a
 * second one cannot start while it runs (the server answers 409).
 */
export function DataExportCard({
  id,
  title,
  description,
  startLabel,
  queryKey,
  list,
  start,
}: {
  id: string;
  title: string;
  description: string;
  startLabel: string;
  queryKey: readonly unknown[];
  list: () => Promise<Page<DataExport>>;
  start: () => Promise<DataExport>;
}) {
  const queryClient = useQueryClient();
  const exports = useQuery({
    queryKey,
    queryFn: list,
    refetchInterval: (query) => (running(query.state.data?.items[0]) ? EXPORT_POLL_MS : false),
  });
  const begin = useMutation({
    mutationFn: start,
    onSuccess: (job) => {
      queryClient.setQueryData<Page<DataExport>>(queryKey, (page) => ({
        items: [job, ...(page?.items ?? []).filter((item) => item.id !== job.id)],
        nextCursor: page?.nextCursor ?? null,
      }));
    },
  });
  const latest = exports.data?.items[0];
  const busy = begin.isPending || running(latest);
  const done = latest?.progress.done ?? 0;
  const total = latest?.progress.total ?? 0;
  return (
    <Card aria-labelledby={id}>
      <CardHeader id={id} title={title} description={description} />
      <CardBody className="grid gap-3 text-sm">
        <ErrorNote error={begin.error ?? exports.error} />
        {running(latest) ? (
          <div className="grid gap-1">
            <progress
              className="h-2 w-full accent-primary"
              max={Math.max(total, 1)}
              value={done}
              aria-label="Export progress"
            />
            <p className="text-muted-foreground" aria-live="polite">
              Preparing your archive: {done} of {total || "…"} parts
            </p>
          </div>
        ) : null}
        {latest?.status === "completed" && latest.downloadUrl ? (
          <p>
            <a
              className="font-medium text-primary underline underline-offset-4"
              href={latest.downloadUrl}
              download
              rel="noreferrer"
            >
              Download archive (JSON
              {latest.sizeBytes !== null ? `, ${formatSize(latest.sizeBytes)}` : ""})
            </a>{" "}
            <span className="text-muted-foreground">
              The link expires{" "}
              <time dateTime={latest.expiresAt ?? undefined}>
                {latest.expiresAt ? new Date(latest.expiresAt).toLocaleString() : ""}
              </time>
              .
            </span>
          </p>
        ) : null}
        {latest?.status === "completed" && !latest.downloadUrl ? (
          <p className="text-muted-foreground">The last archive's link has expired.</p>
        ) : null}
        {latest?.status === "failed" ? (
          <p role="alert" className="text-destructive">
            The export failed{latest.error ? `: ${latest.error}` : ""}. You can start it again.
          </p>
        ) : null}
        <div>
          <Button disabled={busy} onClick={() => begin.mutate()}>
            {busy ? "Preparing…" : startLabel}
          </Button>
        </div>
      </CardBody>
    </Card>
  );
}

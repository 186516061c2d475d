import type { KnowledgeDocument } from "@parley/shared";

/**
 * Where a document's newest version is on its way into search: queued, indexing with its
 * passages done of all (a bar a person can watch), ready, or failed with why. While a new version
 * is indexed, the one before it is still what the assistant finds.
 */
export function IndexingStatus({ document }: { document: KnowledgeDocument }) {
  const { status, done, total, error, version } = document.indexing;
  if (status === "ready") {
    return <span className="font-medium text-success text-xs">Ready: the assistant finds it</span>;
  }
  if (status === "failed") {
    return (
      <span className="grid gap-0.5 text-destructive text-xs">
        <span className="font-medium">Indexing failed</span>
        {error ? <span>{error}</span> : null}
      </span>
    );
  }
  const pct = total === 0 ? 0 : Math.round((done * 100) / total);
  const words = status === "queued" ? "Queued" : `Indexing ${done} of ${total} passages`;
  return (
    <span className="grid min-w-36 gap-1">
      <span className="text-xs">
        {words}
        {version > 1 ? ` (version ${version})` : ""}
      </span>
      <span
        role="progressbar"
        aria-label={`Indexing ${document.name}`}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
        aria-valuetext={words}
        className="block h-1.5 overflow-hidden rounded-full bg-muted"
      >
        <span className="block h-full bg-primary transition-[width]" style={{ width: `${pct}%` }} />
      </span>
    </span>
  );
}

import { useQuery } from "@tanstack/react-query";
import { Skeleton } from "../../components/ui/states.tsx";
import { knowledgeApi, knowledgeKeys } from "../../lib/knowledge-api.ts";
import { formatBytes } from "./format.ts";

/**
 * The org's documents against its storage quota (`GET /api/orgs/:orgId/billing/storage`): the
 * current versions' uploaded bytes, across all its projects. Over the quota an upload is refused
 * (409) until documents are deleted.
 */
export function StorageMeter({ orgId }: { orgId: string }) {
  const storage = useQuery({
    queryKey: knowledgeKeys.storage(orgId),
    queryFn: () => knowledgeApi.storage(orgId),
  });
  if (storage.isPending) return <Skeleton className="h-10 w-full" />;
  if (storage.isError) {
    return <p className="text-muted-foreground text-sm">The storage used could not be read.</p>;
  }
  const { usedBytes, quotaBytes, documents, maxDocumentBytes } = storage.data;
  const share = quotaBytes === 0 ? 1 : Math.min(1, usedBytes / quotaBytes);
  const tone = share >= 0.9 ? "bg-destructive" : share >= 0.75 ? "bg-warning" : "bg-primary";
  return (
    <div className="grid gap-1.5" data-testid="storage-meter">
      <div className="flex flex-wrap items-baseline justify-between gap-2 text-sm">
        <span id={`storage-${orgId}`} className="font-medium">
          The organization's documents
        </span>
        <span className="text-muted-foreground tabular-nums">
          {formatBytes(usedBytes)} of {formatBytes(quotaBytes)} used
        </span>
      </div>
      <meter
        aria-labelledby={`storage-${orgId}`}
        min={0}
        max={quotaBytes}
        value={Math.min(usedBytes, quotaBytes)}
        aria-valuetext={`${formatBytes(usedBytes)} of ${formatBytes(quotaBytes)}`}
        className="sr-only"
      />
      {/* The meter for the eye (the element above is the one assistive technology reads). */}
      <div aria-hidden="true" className="h-2 overflow-hidden rounded-full bg-muted">
        <div className={`h-full ${tone}`} style={{ width: `${Math.round(share * 100)}%` }} />
      </div>
      <p className="text-muted-foreground text-xs">
        {documents === 1 ? "1 document" : `${documents} documents`} in the organization. Each file
        may be up to {formatBytes(maxDocumentBytes)}.
      </p>
    </div>
  );
}

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Loading } from "../../components/ui/states.tsx";
import { errorMessage } from "../../lib/api.ts";
import { knowledgeApi, knowledgeKeys } from "../../lib/knowledge-api.ts";
import { formatBytes, typeLabel } from "./format.ts";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/** A document's versions, read when the disclosure opens (newest first, who and when). */
export function DocumentVersions({ documentId, count }: { documentId: string; count: number }) {
  const [open, setOpen] = useState(false);
  return (
    <details
      className="text-muted-foreground text-xs"
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary className="w-fit cursor-pointer rounded-sm outline-none hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring">
        {count === 1 ? "1 version" : `${count} versions`}
      </summary>
      {open ? <VersionList documentId={documentId} /> : null}
    </details>
  );
}

function VersionList({ documentId }: { documentId: string }) {
  const detail = useQuery({
    queryKey: knowledgeKeys.document(documentId),
    queryFn: () => knowledgeApi.document(documentId),
  });
  if (detail.isPending) return <Loading label="Loading versions…" lines={2} />;
  if (detail.isError) return <p className="text-destructive">{errorMessage(detail.error)}</p>;
  return (
    <ol className="mt-1 grid gap-1" aria-label={`Versions of ${detail.data.name}`}>
      {detail.data.versions.map((version) => (
        <li key={version.version} className="tabular-nums">
          Version {version.version}
          {version.version === detail.data.version ? " (current)" : ""} ·{" "}
          {typeLabel(version.contentType)} · {formatBytes(version.bytes)} ·{" "}
          {when.format(new Date(version.createdAt))}
        </li>
      ))}
    </ol>
  );
}

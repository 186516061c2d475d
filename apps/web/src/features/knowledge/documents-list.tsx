import type { KnowledgeDocument } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { BookOpen, Trash2 } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { knowledgeApi, knowledgeKeys } from "../../lib/knowledge-api.ts";
import { refusalText } from "../../lib/refusal.ts";
import { DocumentVersions } from "./document-versions.tsx";
import { formatBytes, typeLabel } from "./format.ts";
import { IndexingStatus } from "./indexing-status.tsx";
import { UploadButton } from "./upload-button.tsx";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });

/**
 * The project's documents, one row each (stacked on a phone): name, format, size, last change
 * and versions; where its indexing is; for owners and admins a new version or a deletion (after
 * a confirmation: a deleted document is out of the assistant's search at once). A list, not the
 * design system's table: at 390 px six columns would scroll sideways.
 */
export function DocumentsList({
  documents,
  projectId,
  orgId,
  canManage,
  upload,
  uploading,
}: {
  documents: KnowledgeDocument[];
  projectId: string;
  orgId: string;
  canManage: boolean;
  upload: (file: File, documentId?: string) => Promise<boolean>;
  uploading: boolean;
}) {
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [deleting, setDeleting] = useState<string | null>(null);
  async function remove(document: KnowledgeDocument) {
    const sure = await confirm({
      title: `Delete ${document.name}?`,
      description:
        "The assistant stops finding it at once, and its text and passages are erased. Replies that cited it keep their quotes.",
      confirmLabel: "Delete document",
      destructive: true,
    });
    if (!sure) return;
    setDeleting(document.id);
    try {
      await knowledgeApi.deleteDocument(document.id);
      toast.success(`${document.name} deleted.`);
    } catch (error) {
      toast.error(refusalText(error));
    } finally {
      setDeleting(null);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.documents(projectId) }),
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.storage(orgId) }),
      ]);
    }
  }
  return (
    <ul aria-label="Documents" className="grid divide-y divide-border">
      {documents.map((document) => (
        <li
          key={document.id}
          aria-label={document.name}
          className="grid gap-3 py-3 sm:grid-cols-[minmax(0,1fr)_12rem_auto] sm:items-center"
        >
          <div className="flex min-w-0 gap-2">
            <BookOpen aria-hidden="true" className="mt-0.5 size-4 shrink-0 text-muted-foreground" />
            <div className="grid min-w-0 gap-0.5">
              <span className="truncate font-medium text-sm" title={document.name}>
                {document.name}
              </span>
              <span className="text-muted-foreground text-xs">
                {typeLabel(document.contentType)} · {formatBytes(document.bytes)} · updated{" "}
                {when.format(new Date(document.updatedAt))}
              </span>
              <DocumentVersions documentId={document.id} count={document.version} />
            </div>
          </div>
          <IndexingStatus document={document} />
          {canManage ? (
            <div className="flex gap-1 sm:justify-end">
              <UploadButton
                size="sm"
                variant="secondary"
                busy={uploading}
                label={`New version of ${document.name}`}
                onFile={(file) => void upload(file, document.id)}
              >
                New version
              </UploadButton>
              <Button
                size="sm"
                variant="ghost"
                disabled={deleting === document.id}
                aria-label={`Delete ${document.name}`}
                onClick={() => void remove(document)}
              >
                <Trash2 aria-hidden="true" />
              </Button>
            </div>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

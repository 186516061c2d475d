import { type KnowledgeDocument, MAX_DOCUMENT_BYTES } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { toast } from "sonner";
import { documentType, knowledgeApi, knowledgeKeys } from "../../lib/knowledge-api.ts";
import { refusalText } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { formatBytes } from "./format.ts";

/** How often a list with a document still being indexed is read again (its progress moves). */
export const INDEXING_POLL_MS = 1000;

/** Whether a document's newest version is still on its way into search. */
export const isIndexing = (document: KnowledgeDocument): boolean =>
  document.indexing.status === "queued" || document.indexing.status === "indexing";

/** The project's documents, newest first, read again every second while one is being indexed. */
export function useDocuments(projectId: string) {
  const [polling, setPolling] = useState(false);
  const paged = usePaged(
    knowledgeKeys.documents(projectId),
    (cursor) => knowledgeApi.documents(projectId, cursor),
    { refetchInterval: polling ? INDEXING_POLL_MS : false },
  );
  const indexing = paged.items.some(isIndexing);
  useEffect(() => setPolling(indexing), [indexing]);
  return { ...paged, polling };
}

/**
 * What a file picked for upload would be refused for, before it is sent (the server refuses the
 * same with a code; this spares a 5 MiB round trip): its type or its size. Null when it may go.
 */
export function uploadProblem(file: File): string | null {
  if (documentType(file) === null) {
    return `${file.name}: only text, Markdown, HTML and PDF files can be added.`;
  }
  if (file.size > MAX_DOCUMENT_BYTES) {
    return `${file.name} is ${formatBytes(file.size)}; a document may be at most ${formatBytes(MAX_DOCUMENT_BYTES)}.`;
  }
  if (file.size === 0) return `${file.name} is empty.`;
  return null;
}

/**
 * Uploads a file as a new document, or as a new version of `documentId`; the list, the document
 * and the org's storage are read again after. Says what happened in a toast (the server's words
 * on a refusal: over the quota, an encrypted PDF, invalid UTF-8).
 */
export function useUpload(projectId: string, orgId: string) {
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  async function upload(file: File, documentId?: string): Promise<boolean> {
    const problem = uploadProblem(file);
    const type = documentType(file);
    if (problem !== null || type === null) {
      toast.error(problem ?? `${file.name} cannot be added.`);
      return false;
    }
    setBusy(true);
    try {
      const added = documentId
        ? await knowledgeApi.uploadVersion(documentId, file, type)
        : await knowledgeApi.uploadDocument(projectId, file, type);
      toast.success(
        documentId
          ? `${added.name}: version ${added.version} is being indexed.`
          : `${added.name} added: it is being indexed.`,
      );
      return true;
    } catch (error) {
      toast.error(refusalText(error));
      return false;
    } finally {
      setBusy(false);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.documents(projectId) }),
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.storage(orgId) }),
        documentId
          ? queryClient.invalidateQueries({ queryKey: knowledgeKeys.document(documentId) })
          : Promise.resolve(),
      ]);
    }
  }
  return { upload, busy };
}

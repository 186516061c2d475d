import { BookOpen } from "lucide-react";
import { LoadMore } from "../../components/load-more.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { DocumentsList } from "./documents-list.tsx";
import { StorageMeter } from "./storage-meter.tsx";
import { UploadButton } from "./upload-button.tsx";
import { useDocuments, useUpload } from "./use-documents.ts";

/**
 * A project's documents and the org's storage, as the documents page shows them: the list (read
 * again every second while one is being indexed), and for owners and admins the upload.
 */
export function DocumentsPanel({
  projectId,
  orgId,
  canManage,
}: {
  projectId: string;
  orgId: string;
  canManage: boolean;
}) {
  const { query, items, more, firstPageError } = useDocuments(projectId);
  const { upload, busy } = useUpload(projectId, orgId);
  const add = canManage ? (
    <UploadButton busy={busy} onFile={(file) => void upload(file)}>
      Add document
    </UploadButton>
  ) : null;
  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_18rem]">
      <Card aria-labelledby="documents-title">
        <CardHeader
          id="documents-title"
          title="Knowledge"
          description="Text, Markdown, HTML and PDF files the assistant searches and cites when its profile has knowledge on."
          actions={items.length > 0 ? add : null}
        />
        <CardBody className="pt-3">
          {query.isPending ? (
            <Loading label="Loading documents…" />
          ) : firstPageError ? (
            <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
          ) : items.length === 0 ? (
            <EmptyState icon={<BookOpen />} title="No documents yet." action={add}>
              {canManage
                ? "Add your help pages, plans or policies: the assistant answers from them and shows where."
                : "An owner or admin of the organization adds them."}
            </EmptyState>
          ) : (
            <>
              <DocumentsList
                documents={items}
                projectId={projectId}
                orgId={orgId}
                canManage={canManage}
                upload={upload}
                uploading={busy}
              />
              <LoadMore more={more} label="More documents" />
            </>
          )}
        </CardBody>
      </Card>
      <Card aria-labelledby="storage-title">
        <CardHeader id="storage-title" title="Storage" />
        <CardBody>
          <StorageMeter orgId={orgId} />
        </CardBody>
      </Card>
    </div>
  );
}

import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { StorageMeter } from "../knowledge/storage-meter.tsx";

/**
 * The org's knowledge storage on the billing overview (issue 31.1: "a storage quota per org
 * shown in billing"): the same meter as the Documents page, over
 * `GET /api/orgs/:orgId/billing/storage`. Storage is a quota, not bought with credits: over it,
 * uploads are refused until documents are deleted. Every member sees it, as they see the page.
 */
export function DocumentStorage({ orgId }: { orgId: string }) {
  return (
    <Card aria-labelledby="billing-storage-title">
      <CardHeader
        id="billing-storage-title"
        title="Document storage"
        description="The current version of every project's documents counts; older versions do not. Over the quota, uploads are refused until documents are deleted."
      />
      <CardBody>
        <StorageMeter orgId={orgId} />
      </CardBody>
    </Card>
  );
}

import { ShieldAlert } from "lucide-react";
import { Page } from "../components/page.tsx";
import { EmptyState } from "../components/ui/states.tsx";
import { ErasureForm } from "../features/admin/erasure-form.tsx";
import { ErasureList } from "../features/admin/erasure-list.tsx";
import { DataExportCard } from "../features/exports/data-export-card.tsx";
import { dataRightsApi } from "../lib/data-rights-api.ts";
import { keys } from "../lib/query.ts";
import { canManage, useSession } from "../lib/session.tsx";

/**
 * The org's data rights in one place ("Data & privacy" in the navigation, at `/admin`): erasure
 * (GDPR Art. 17) for owners and admins, filing a request for a member, project or session and
 * watching it clear store after store, and the org's data export (Art. 20) for owners, which
 * used to sit in Billing's settings. This page held erasure alone under "Admin", a name that
 * said nothing of it. One's own account's export and deletion live on the account page. A member
 * who comes here by URL (or an admin demoted since: the role is re-read at each navigation) gets
 * a plain answer and no request is made, so no 403 reaches the console.
 */
export default function AdminPage() {
  const { me, org } = useSession();
  if (!org) return null;
  if (!canManage(org)) {
    return (
      <Page title="Data & privacy" heading="Erasure requests" width="narrow">
        <EmptyState icon={<ShieldAlert />} title="Only owners and admins can file erasure requests">
          Ask an owner or admin of {org.name} to erase a member, project or session. You can export
          or delete your own account from your account page.
        </EmptyState>
      </Page>
    );
  }
  return (
    <Page
      title="Data & privacy"
      heading={`Data and privacy in ${org.name}`}
      description="Erase a member, a project or a session from every store under GDPR Art. 17 and follow each request step by step; owners export the organization's data."
    >
      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_24rem]">
        {/* The form comes first on a phone and in reading order; on a wide screen it sits right. */}
        <div className="grid min-w-0 content-start gap-6 lg:col-start-2 lg:row-start-1">
          <ErasureForm orgId={org.id} orgName={org.name} actorRole={org.role} />
          {org.role === "owner" ? (
            <DataExportCard
              id="org-export-title"
              title="Export organization data"
              description="Members, projects, every session with its transcript, apps, usage, the ledger and the audit trail, as one JSON file. Owners only; the link is good for 24 hours."
              startLabel="Export organization data"
              queryKey={keys.orgExports(org.id)}
              list={() => dataRightsApi.orgExports(org.id)}
              start={() => dataRightsApi.startOrgExport(org.id)}
            />
          ) : null}
        </div>
        <div className="grid min-w-0 lg:col-start-1 lg:row-start-1">
          <ErasureList orgId={org.id} meId={me?.id} />
        </div>
      </div>
    </Page>
  );
}

import { ShieldAlert } from "lucide-react";
import { Page } from "../components/page.tsx";
import { EmptyState } from "../components/ui/states.tsx";
import { ErasureForm } from "../features/admin/erasure-form.tsx";
import { ErasureList } from "../features/admin/erasure-list.tsx";
import { canManage, useSession } from "../lib/session.tsx";

/**
 * Erasure (GDPR Art. 17) for the org's owners and admins: file a request for a member, project or
 * session, and watch each request clear store after store. Deleting one's own account lives on the
 * account page. A member who comes here by URL (or an admin demoted since: the role is re-read at
 * each navigation) gets a plain answer and no request is made, so no 403 reaches the console.
 */
export default function AdminPage() {
  const { me, org } = useSession();
  if (!org) return null;
  if (!canManage(org)) {
    return (
      <Page title="Admin" heading="Erasure requests" width="narrow">
        <EmptyState icon={<ShieldAlert />} title="Only owners and admins can file erasure requests">
          Ask an owner or admin of {org.name} to erase a member, project or session. You can delete
          your own account from your account page.
        </EmptyState>
      </Page>
    );
  }
  return (
    <Page
      title="Admin"
      heading={`Erasure in ${org.name}`}
      description="Erase a member, a project or a session from every store under GDPR Art. 17, and follow each request step by step."
    >
      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_24rem]">
        {/* The form comes first on a phone and in reading order; on a wide screen it sits right. */}
        <div className="min-w-0 lg:col-start-2 lg:row-start-1">
          <ErasureForm orgId={org.id} orgName={org.name} actorRole={org.role} />
        </div>
        <div className="grid min-w-0 lg:col-start-1 lg:row-start-1">
          <ErasureList orgId={org.id} meId={me?.id} />
        </div>
      </div>
    </Page>
  );
}

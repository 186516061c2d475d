import { LoadMore } from "../components/load-more.tsx";
import { ErasureForm } from "../features/admin/erasure-form.tsx";
import { ErasureList, usePollWhileActive } from "../features/admin/erasure-list.tsx";
import { api } from "../lib/api.ts";
import { useSession } from "../lib/session.tsx";
import { usePages } from "../lib/use-pages.ts";

/** Erasure requests of the org (file one, watch its steps) and the user's own account deletion. */
export default function AdminPage() {
  const { org } = useSession();
  const orgId = org?.id ?? "";
  const [requests, reload, moreRequests] = usePages(
    (cursor) =>
      orgId ? api.erasureRequests(orgId, cursor) : Promise.resolve({ items: [], nextCursor: null }),
    [orgId],
  );
  usePollWhileActive(requests, reload);
  return (
    <div className="stack">
      <h1>Admin{org ? ` for ${org.name}` : ""}</h1>
      <div className="columns">
        <section aria-labelledby="requests-title" className="stack">
          <h2 id="requests-title">Erasure requests</h2>
          <ErasureList state={requests} />
          <LoadMore more={moreRequests} label="Older requests" />
        </section>
        <div className="stack">{orgId ? <ErasureForm orgId={orgId} onFiled={reload} /> : null}</div>
      </div>
    </div>
  );
}

import type { Me } from "@parley/shared";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useRef } from "react";
import { useSession } from "./session.tsx";

/**
 * Which org the person was working in and has lost since the last read of who they are, or null:
 * the org they had selected (by id) is no longer among their orgs. A first read, a sign-out or an
 * org they switched away from is not a loss.
 */
export function lostOrg(
  before: Pick<Me, "orgs"> | null | undefined,
  after: Pick<Me, "orgs"> | null | undefined,
  selectedId: string | null,
): { id: string; name: string } | null {
  if (!before || !after || !selectedId) return null;
  const had = before.orgs.find((org) => org.id === selectedId);
  if (!had || after.orgs.some((org) => org.id === selectedId)) return null;
  return { id: had.id, name: had.name };
}

/**
 * When the person is removed from the org they are working in (seen at the next read of who they
 * are, which every navigation makes), they go to their projects with a notice saying so, rather
 * than onto a screen of an org they no longer see (a 404, or someone else's view).
 */
export function useOrgRemovalNotice(): void {
  const { me, org } = useSession();
  const navigate = useNavigate();
  const seen = useRef<{ me: Me | null | undefined; orgId: string | null }>({ me, orgId: null });
  useEffect(() => {
    const before = seen.current;
    seen.current = { me, orgId: org?.id ?? before.orgId };
    const lost = lostOrg(before.me, me, before.orgId);
    if (!lost) return;
    void navigate({ to: "/projects", replace: true });
    void import("sonner").then(({ toast }) =>
      toast.warning(`You are no longer a member of ${lost.name}.`, {
        description: "An owner or admin removed you. Your other organizations are still yours.",
      }),
    );
  }, [me, org, navigate]);
}

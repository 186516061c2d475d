import type { Me } from "@parley/shared";
import type { QueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useEffect, useRef, useSyncExternalStore } from "react";
import { keys } from "./query.ts";
import { loadMe, ORG_KEY, useSession } from "./session.tsx";

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

let leaving: { id: string; name: string } | null = null;
const listeners = new Set<() => void>();

/**
 * The org the person is being taken out of, between the read that found them removed and the
 * screen they are sent to: the screen of that org is taken down first, so it asks nothing more
 * of it (its chat reconnecting, its lists re-reading: each a 404 in the console).
 */
export const orgLeaving = {
  get: () => leaving,
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  },
  set(value: { id: string; name: string } | null) {
    leaving = value;
    for (const listener of listeners) listener();
  },
};

/** The notice for an org the person lost. */
export function sayOrgLost(lost: { name: string }): void {
  void import("sonner").then(({ toast }) =>
    toast.warning(`You are no longer a member of ${lost.name}.`, {
      description: "An owner or admin removed you. Your other organizations are still yours.",
    }),
  );
}

/**
 * Re-reads who the person is (before a screen loads). When the org they work in is gone from
 * their orgs, the current screen is taken down (`orgLeaving`) before the answer reaches the app,
 * and true is returned: the caller sends them to their projects.
 */
export async function refreshWho(queryClient: QueryClient): Promise<boolean> {
  const before = queryClient.getQueryData<Me | null>(keys.me);
  const fresh = await loadMe();
  const stored = localStorage.getItem(ORG_KEY);
  const selected = before?.orgs.some((org) => org.id === stored)
    ? stored
    : (before?.orgs[0]?.id ?? null);
  const lost = lostOrg(before, fresh, selected);
  if (lost) {
    orgLeaving.set(lost);
    // Let React take the screen down before the new answer re-renders it for another org.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  queryClient.setQueryData(keys.me, fresh);
  return lost !== null;
}

/** Whether the person is being taken out of an org right now (the screen shows nothing of it). */
export const useOrgLeaving = () => useSyncExternalStore(orgLeaving.subscribe, orgLeaving.get);

/**
 * The same, when the loss shows up outside a navigation (a read on the window's focus): they go to
 * their projects with the notice, rather than stay on a screen of an org they no longer see.
 */
export function useOrgRemovalNotice(): void {
  const { me, org } = useSession();
  const navigate = useNavigate();
  const seen = useRef<{ me: Me | null | undefined; orgId: string | null }>({ me, orgId: null });
  useEffect(() => {
    const before = seen.current;
    seen.current = { me, orgId: org?.id ?? before.orgId };
    const lost = lostOrg(before.me, me, before.orgId);
    // A navigation found it first: it sends them on and says so (router.tsx).
    if (!lost || orgLeaving.get()) return;
    void navigate({ to: "/projects", replace: true });
    sayOrgLost(lost);
  }, [me, org, navigate]);
}

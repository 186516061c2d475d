import type { Me, OrgSummary } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from "react";
import { api, isApiError } from "./api.ts";
import { keys } from "./query.ts";

export const ORG_KEY = "parley.org";

interface SessionValue {
  /** `undefined` while the refresh cookie is being tried after a page load. */
  me: Me | null | undefined;
  org: OrgSummary | null;
  selectOrg(orgId: string): void;
  /** Reloads `/api/me` (after sign-in, a new org, a role change). */
  reload(): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

/** Signed out is an answer (null), not an error: a 401 from refresh or `/api/me` means no session. */
export async function loadMe(): Promise<Me | null> {
  try {
    if (!api.hasToken()) {
      if (!api.mayHaveSession()) return null;
      await api.refresh();
    }
    return await api.me();
  } catch (error) {
    if (isApiError(error) && (error.status === 401 || error.status === 403)) return null;
    throw error;
  }
}

/** A load started before React renders (main.tsx), taken by the first query of `me`. */
let early: Promise<Me | null> | null = null;

/**
 * Starts finding out who is signed in as soon as the script runs, so the refresh and `/api/me`
 * overlap the app's first render and route chunks instead of following them.
 */
export function preloadSession(): void {
  early ??= loadMe();
}

function firstOrFreshMe(): Promise<Me | null> {
  const started = early;
  early = null;
  return started ?? loadMe();
}

/**
 * Who is signed in and which org they work in, from the query cache (`keys.me`): the router
 * invalidates it on every navigation, so a role changed elsewhere shows at the next page. The org
 * choice survives a reload.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const query = useQuery({ queryKey: keys.me, queryFn: firstOrFreshMe, staleTime: 5_000 });
  const [orgId, setOrgId] = useState<string | null>(() => localStorage.getItem(ORG_KEY));

  useEffect(
    () =>
      api.onAuthChange((signedIn) => {
        if (!signedIn) queryClient.setQueryData(keys.me, null);
      }),
    [queryClient],
  );

  const reload = useCallback(async () => {
    await queryClient.invalidateQueries({ queryKey: keys.me });
  }, [queryClient]);

  const selectOrg = useCallback((id: string) => {
    localStorage.setItem(ORG_KEY, id);
    setOrgId(id);
  }, []);

  const signOut = useCallback(async () => {
    await api.logout();
    queryClient.clear();
    queryClient.setQueryData(keys.me, null);
  }, [queryClient]);

  // A failed load (server down) keeps the last answer; with none, the app shows signed out.
  const me = query.data !== undefined ? query.data : query.isError ? null : undefined;
  const org = useMemo(() => {
    if (!me) return null;
    return me.orgs.find((candidate) => candidate.id === orgId) ?? me.orgs[0] ?? null;
  }, [me, orgId]);

  const value = useMemo(
    () => ({ me, org, selectOrg, reload, signOut }),
    [me, org, selectOrg, reload, signOut],
  );
  return <SessionContext value={value}>{children}</SessionContext>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error("useSession outside SessionProvider");
  return value;
}

/** The current org, for screens that only render inside one (the shell guarantees it). */
export function useOrg(): OrgSummary {
  const { org } = useSession();
  if (!org) throw new Error("useOrg outside an org");
  return org;
}

/** Whether the person may manage the current org (owner or admin). */
export const canManage = (org: OrgSummary | null): boolean =>
  org?.role === "owner" || org?.role === "admin";

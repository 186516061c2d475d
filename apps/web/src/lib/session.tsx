import type { Me, OrgSummary } from "@parley/shared";
import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from "react";
import { api } from "./api.ts";

const ORG_KEY = "parley.org";

interface SessionValue {
  /** `undefined` while the refresh cookie is being tried after a page load. */
  me: Me | null | undefined;
  org: OrgSummary | null;
  selectOrg(orgId: string): void;
  /** Reloads `/api/me` (after sign-in, or a new org). */
  reload(): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

/** Who is signed in and which org they work in. The org choice survives a reload. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [orgId, setOrgId] = useState<string | null>(() => localStorage.getItem(ORG_KEY));

  const reload = useCallback(async () => {
    try {
      setMe(await api.me());
    } catch {
      setMe(null);
    }
  }, []);

  useEffect(() => {
    let live = true;
    api
      .refresh()
      .then(() => api.me())
      .then(
        (value) => live && setMe(value),
        () => live && setMe(null),
      );
    const off = api.onAuthChange((signedIn) => {
      if (!signedIn) setMe(null);
    });
    return () => {
      live = false;
      off();
    };
  }, []);

  const selectOrg = useCallback((id: string) => {
    localStorage.setItem(ORG_KEY, id);
    setOrgId(id);
  }, []);

  const signOut = useCallback(async () => {
    await api.logout();
    setMe(null);
  }, []);

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

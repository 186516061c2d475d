import { useEffect, useRef } from "react";
import { toast } from "sonner";
import { useSession } from "./session.tsx";

/**
 * Makes the org switcher (and every org-scoped page after it: billing, members, assistants,
 * developers) follow the org of the resource a page shows. A person in two orgs who opens a link
 * to a session, project, profile or app of org A while working in org B would otherwise see A's
 * data under B's name in the header, and spend A's credits believing they spend B's. The org is
 * switched once per resource org the page shows, with a notice saying so; a switch the person
 * makes afterwards (the switcher leaves the page) is not undone. An org the person is not in is
 * left alone: the API answers such a resource 404.
 */
export function useResourceOrg(orgId: string | undefined): void {
  const { me, org, selectOrg } = useSession();
  const followed = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!orgId || !me || followed.current === orgId) return;
    followed.current = orgId;
    if (org?.id === orgId) return;
    const target = me.orgs.find((candidate) => candidate.id === orgId);
    if (!target) return;
    selectOrg(target.id);
    toast.info(`Switched to ${target.name}: this page belongs to it.`);
  }, [orgId, me, org, selectOrg]);
}

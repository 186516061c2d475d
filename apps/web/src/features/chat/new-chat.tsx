import type { Session } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate, useRouter } from "@tanstack/react-router";
import { Plus } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button, type ButtonProps } from "../../components/ui/button.tsx";
import { api } from "../../lib/api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { keys } from "../../lib/query.ts";
import { refusalText } from "../../lib/refusal.ts";
import { useSession } from "../../lib/session.tsx";
import { usePaged } from "../../lib/use-paged.ts";

/** A chat nobody has written in yet: no title, no spend, no activity since it was made. */
export const isUnused = (session: Session): boolean =>
  session.title === null &&
  session.spendMicros === 0 &&
  session.lastActivityAt === session.createdAt;

/**
 * Opens a new assistant session in the project and goes to it, or to the person's newest chat
 * there that is still empty: pressing "New chat" again and again does not fill the sidebar with
 * empty "Untitled" chats (a chat is made for real only when one is needed).
 */
export function useNewChat(projectId: string) {
  const navigate = useNavigate();
  const router = useRouter();
  const queryClient = useQueryClient();
  const { org, me } = useSession();
  const [busy, setBusy] = useState(false);
  async function start() {
    setBusy(true);
    // The chat screen's script loads while the chat is found or made, not after.
    const chatRoute = router.routesById["/app/sessions/$sessionId"] as
      | (typeof router.routesById)["/app/sessions/$sessionId"]
      | undefined;
    if (chatRoute) void router.loadRouteChunk(chatRoute)?.catch(() => {});
    try {
      const mine =
        org && me
          ? await orgsApi.orgSessions(org.id, { project: projectId, member: me.id })
          : { items: [] };
      const session = mine.items.find(isUnused) ?? (await api.createSession(projectId));
      void queryClient.invalidateQueries({ queryKey: keys.sessions(projectId) });
      await navigate({ to: "/sessions/$sessionId", params: { sessionId: session.id } });
    } catch (error) {
      toast.error(refusalText(error));
    } finally {
      setBusy(false);
    }
  }
  return { start, busy };
}

/** The one way to start a session, the same words everywhere: "New chat". */
export function NewChatButton({
  projectId,
  variant = "primary",
  size,
}: {
  projectId: string;
  variant?: ButtonProps["variant"];
  size?: ButtonProps["size"];
}) {
  const { start, busy } = useNewChat(projectId);
  return (
    <Button variant={variant} size={size} disabled={busy} onClick={() => void start()}>
      <Plus aria-hidden="true" />
      New chat
    </Button>
  );
}

/**
 * The signed-in person's own chats in a project, newest first. Owners and admins may list
 * everyone's sessions (the erasure picker does), but "your chats" are yours: a colleague's
 * private chat is not shown here.
 */
export function useMyChats(orgId: string, projectId: string) {
  const { me } = useSession();
  const userId = me?.id ?? "";
  return usePaged(
    keys.sessions(projectId),
    (cursor) =>
      orgsApi.orgSessions(orgId, {
        project: projectId,
        member: userId,
        ...(cursor === undefined ? {} : { cursor }),
      }),
    { enabled: orgId !== "" && userId !== "" },
  );
}

import { useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { Plus } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button, type ButtonProps } from "../../components/ui/button.tsx";
import { api, errorMessage } from "../../lib/api.ts";
import { keys } from "../../lib/query.ts";

/** Opens a new assistant session in the project and goes to it. */
export function useNewChat(projectId: string) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  async function start() {
    setBusy(true);
    try {
      const session = await api.createSession(projectId);
      void queryClient.invalidateQueries({ queryKey: keys.sessions(projectId) });
      await navigate({ to: "/sessions/$sessionId", params: { sessionId: session.id } });
    } catch (error) {
      toast.error(errorMessage(error));
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

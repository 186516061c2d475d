import type { Session } from "@parley/shared";
import { useState } from "react";
import { FormError } from "../../components/field-error.tsx";
import { api } from "../../lib/api.ts";
import { Link } from "../../lib/router.tsx";
import { useSession } from "../../lib/session.tsx";
import { ChatBoundary, ChatPanel } from "./chat-panel.tsx";
import { AssistantReplyMeta } from "./reply-meta.tsx";

/**
 * An assistant session's chat: Regenerate, and each reply's cost with a top-up link when credits
 * or a limit stopped it. Used by the session page and by the project page's panel.
 */
export function AssistantChat({ sessionId, label }: { sessionId: string; label: string }) {
  return (
    <ChatBoundary>
      <ChatPanel
        agent="assistant-agent"
        name={sessionId}
        label={label}
        regenerate
        renderMeta={(message) => (
          <AssistantReplyMeta
            metadata={message.metadata}
            topUp={<Link to="/billing">Top up credits</Link>}
          />
        )}
      />
    </ChatBoundary>
  );
}

/**
 * The in-app assistant as a panel inside the project page: it continues the member's latest
 * session of this project, or opens a new one, without leaving the page.
 */
export function AssistantPanel({
  projectId,
  sessions,
}: {
  projectId: string;
  sessions: Session[];
}) {
  const { me } = useSession();
  const [sessionId, setSessionId] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [opening, setOpening] = useState(false);

  async function open() {
    setOpening(true);
    setError(null);
    try {
      const mine = sessions.find((session) => session.ownerId === me?.id);
      setSessionId(mine?.id ?? (await api.createSession(projectId)).id);
    } catch (caught) {
      setError(caught);
    } finally {
      setOpening(false);
    }
  }

  if (!sessionId) {
    return (
      <div className="stack">
        <FormError error={error} />
        <button type="button" className="primary" onClick={() => void open()} disabled={opening}>
          Ask the assistant here
        </button>
      </div>
    );
  }
  return (
    <div className="stack">
      <p className="muted">
        In <Link to={`/sessions/${encodeURIComponent(sessionId)}`}>this session</Link>; replies are
        charged to your organization's credits.
      </p>
      <AssistantChat sessionId={sessionId} label="In-app assistant" />
    </div>
  );
}

import { useParams } from "@tanstack/react-router";
import { AssistantChat } from "../features/chat/assistant-panel.tsx";
import { api, errorMessage } from "../lib/api.ts";
import { formatMicros } from "../lib/money.ts";
import { Link } from "../lib/router.tsx";
import { useAsync } from "../lib/use-async.ts";

export default function SessionPage() {
  const { sessionId } = useParams({ strict: false }) as { sessionId: string };
  const [session] = useAsync(() => api.session(sessionId), [sessionId]);
  if (session.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading session…
      </p>
    );
  }
  if (session.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(session.error)}
      </p>
    );
  }
  const { data } = session;
  return (
    <div className="stack">
      <p>
        <Link to={`/projects/${encodeURIComponent(data.projectId)}`}>← Project</Link>
      </p>
      <h1>{data.title ?? "Untitled session"}</h1>
      <p className="muted">Spent so far: {formatMicros(data.spendMicros)}</p>
      <AssistantChat sessionId={sessionId} label="Assistant chat" />
    </div>
  );
}

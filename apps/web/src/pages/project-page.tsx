import { useParams } from "@tanstack/react-router";
import { useState } from "react";
import { FormError } from "../components/field-error.tsx";
import { LoadMore } from "../components/load-more.tsx";
import { AssistantPanel } from "../features/chat/assistant-panel.tsx";
import { ChatBoundary, ChatPanel } from "../features/chat/chat-panel.tsx";
import { previewStatus } from "../features/chat/reply-meta.tsx";
import { MemoryEditor } from "../features/projects/memory-editor.tsx";
import { api, errorMessage } from "../lib/api.ts";
import { formatMicros } from "../lib/money.ts";
import { Link, navigate } from "../lib/router.tsx";
import { useAsync } from "../lib/use-async.ts";
import { usePages } from "../lib/use-pages.ts";

export default function ProjectPage() {
  const { projectId } = useParams({ strict: false }) as { projectId: string };
  const [project, , setProject] = useAsync(() => api.project(projectId), [projectId]);
  const [sessions, , moreSessions] = usePages(
    (cursor) => api.sessions(projectId, cursor),
    [projectId],
  );
  const [creating, setCreating] = useState(false);
  const [createError, setCreateError] = useState<unknown>(null);

  async function newSession() {
    setCreating(true);
    setCreateError(null);
    try {
      const session = await api.createSession(projectId);
      navigate(`/sessions/${encodeURIComponent(session.id)}`);
    } catch (caught) {
      setCreateError(caught);
      setCreating(false);
    }
  }

  if (project.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading project…
      </p>
    );
  }
  if (project.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(project.error)}
      </p>
    );
  }
  const startSession = (
    <button type="button" className="primary" onClick={() => void newSession()} disabled={creating}>
      Start an assistant session
    </button>
  );
  return (
    <div className="stack">
      <p>
        <Link to="/projects">← Projects</Link>
      </p>
      <h1>{project.data.name}</h1>
      <div className="columns">
        <section aria-labelledby="preview-title" className="card">
          <h2 id="preview-title">Onboarding preview</h2>
          <p className="muted">Free turns to try the assistant with this project's memory.</p>
          <ChatBoundary>
            <ChatPanel
              agent="onboarding-agent"
              name={projectId}
              label="Onboarding preview chat"
              closed={(messages) => previewStatus(messages).exhausted}
              renderStatus={(messages) => {
                const status = previewStatus(messages);
                if (status.exhausted) {
                  return (
                    <div className="notice" role="status">
                      <p>The free preview is over. Keep going in an assistant session.</p>
                      {startSession}
                    </div>
                  );
                }
                return status.freeTurnsLeft === null ? null : (
                  <p className="muted" role="status">
                    {status.freeTurnsLeft} free {status.freeTurnsLeft === 1 ? "turn" : "turns"} left
                  </p>
                );
              }}
            />
          </ChatBoundary>
        </section>
        <div className="stack">
          <section aria-labelledby="sessions-title" className="card stack">
            <h2 id="sessions-title">Assistant sessions</h2>
            {sessions.status === "loading" ? (
              <p role="status" className="muted">
                Loading sessions…
              </p>
            ) : sessions.status === "error" ? (
              <p role="alert" className="error">
                {errorMessage(sessions.error)}
              </p>
            ) : sessions.data.items.length === 0 ? (
              <p className="empty">No sessions yet.</p>
            ) : (
              <ul className="list">
                {sessions.data.items.map((session) => (
                  <li key={session.id}>
                    <Link to={`/sessions/${encodeURIComponent(session.id)}`}>
                      {session.title ?? "Untitled session"}
                    </Link>
                    <span className="muted">
                      {" "}
                      · {formatMicros(session.spendMicros)} ·{" "}
                      {new Date(session.lastActivityAt).toLocaleString()}
                    </span>
                  </li>
                ))}
              </ul>
            )}
            <LoadMore more={moreSessions} label="More sessions" />
            <FormError error={createError} />
            <button type="button" onClick={() => void newSession()} disabled={creating}>
              New session
            </button>
          </section>
          <section aria-labelledby="assistant-title" className="card stack">
            <h2 id="assistant-title">In-app assistant</h2>
            <AssistantPanel
              projectId={projectId}
              sessions={sessions.status === "ready" ? sessions.data.items : []}
            />
          </section>
          <section aria-labelledby="memory-title" className="card">
            <h2 id="memory-title">Project memory</h2>
            <MemoryEditor project={project.data} onSaved={setProject} />
          </section>
        </div>
      </div>
    </div>
  );
}

import { useEffect } from "react";
import { type ErasureRequest, errorMessage } from "../../lib/api.ts";
import type { AsyncState } from "../../lib/use-async.ts";

export const POLL_MS = 2_000;

export const isActive = (request: ErasureRequest) =>
  request.status === "pending" || request.status === "running";

/** Calls `reload` every POLL_MS while any request is still pending or running. */
export function usePollWhileActive(
  state: AsyncState<{ items: ErasureRequest[] }>,
  reload: () => void,
): void {
  const active = state.status === "ready" && state.data.items.some(isActive);
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [active, reload]);
}

/** Erasure requests of the org with their steps, newest first. */
export function ErasureList({ state }: { state: AsyncState<{ items: ErasureRequest[] }> }) {
  if (state.status === "loading") {
    return (
      <p role="status" className="muted">
        Loading erasure requests…
      </p>
    );
  }
  if (state.status === "error") {
    return (
      <p role="alert" className="error">
        {errorMessage(state.error)}
      </p>
    );
  }
  if (state.data.items.length === 0) return <p className="empty">No erasure requests yet.</p>;
  return (
    <ul className="list">
      {state.data.items.map((request) => (
        <li key={request.id} className="card stack">
          <p className="erasure-head">
            <strong>
              {request.subject.type} <code title={request.subject.hash}>{request.id}</code>
            </strong>{" "}
            <span className={`badge status-${request.status}`}>{request.status}</span>
          </p>
          <p className="muted">
            Filed {new Date(request.createdAt).toLocaleString()}
            {request.completedAt
              ? ` · completed ${new Date(request.completedAt).toLocaleString()}`
              : ""}
            {request.reason ? ` · ${request.reason}` : ""} · {request.legalBasis}
          </p>
          <ol className="steps" aria-label={`Steps of ${request.id}`}>
            {request.steps.map((step) => (
              <li key={step.name} className={`step-${step.status}`}>
                <span>{step.name}</span> <span className="muted">{step.status}</span>
                {step.detail ? <span className="muted"> · {step.detail}</span> : null}
              </li>
            ))}
          </ol>
        </li>
      ))}
    </ul>
  );
}

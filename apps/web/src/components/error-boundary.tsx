import { Component, type ReactNode } from "react";
import { errorMessage } from "../lib/api.ts";

/** Shows a failed screen (a chunk that did not load, a render error) instead of a blank page. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: null };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div role="alert" className="error">
        <p>{errorMessage(this.state.error)}</p>
        <button type="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}

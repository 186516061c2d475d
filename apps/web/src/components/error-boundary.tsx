import { Component, type ReactNode } from "react";
import { ErrorNote } from "./ui/states.tsx";

/** Shows a failed screen (a chunk that did not load, a render error) instead of a blank page. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: null };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="p-4">
        <ErrorNote error={this.state.error} retry={() => window.location.reload()} />
      </div>
    );
  }
}

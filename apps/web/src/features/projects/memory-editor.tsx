import type { Project } from "@parley/shared";
import { useId, useState } from "react";
import { api, errorMessage, isApiError } from "../../lib/api.ts";
import { formatMemory, parseMemory } from "../../lib/memory.ts";

/** Edits the project's shared memory as JSON; nothing is sent until the text is a valid memory. */
export function MemoryEditor({
  project,
  onSaved,
}: {
  project: Project;
  onSaved: (project: Project) => void;
}) {
  const id = useId();
  const [text, setText] = useState(() => formatMemory(project.memory));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  async function save() {
    setSaved(false);
    const parsed = parseMemory(text);
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      const updated = await api.updateProject(project.id, { memory: parsed.memory });
      setText(formatMemory(updated.memory));
      setSaved(true);
      onSaved(updated);
    } catch (caught) {
      setError(
        isApiError(caught) && caught.code === "payload_too_large"
          ? `Memory is too large to save: ${caught.message}`
          : errorMessage(caught),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="stack"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <label htmlFor={id}>
        <span>Memory (JSON object the assistant reads)</span>
      </label>
      <textarea
        id={id}
        className="code"
        rows={10}
        spellCheck={false}
        value={text}
        aria-invalid={error !== null}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(event) => {
          setText(event.target.value);
          setSaved(false);
        }}
      />
      {error ? (
        <p id={`${id}-error`} role="alert" className="error">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="ok">
          Memory saved.
        </p>
      ) : null}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "Saving…" : "Save memory"}
      </button>
    </form>
  );
}

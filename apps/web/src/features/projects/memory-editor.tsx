import type { Project } from "@parley/shared";
import { useId, useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Textarea } from "../../components/ui/input.tsx";
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
      toast.success("Memory saved.");
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
      className="grid gap-3"
      aria-label="Project memory"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <label htmlFor={id} className="font-medium text-sm">
        Memory (JSON object the assistant reads)
      </label>
      <Textarea
        id={id}
        rows={10}
        spellCheck={false}
        className="font-mono text-xs"
        value={text}
        aria-invalid={error !== null}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(event) => {
          setText(event.target.value);
          setSaved(false);
        }}
      />
      {error ? (
        <p id={`${id}-error`} role="alert" className="text-destructive text-sm">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="text-sm text-success">
          Memory saved.
        </p>
      ) : null}
      <div>
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Saving…" : "Save memory"}
        </Button>
      </div>
    </form>
  );
}

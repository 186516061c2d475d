import type { Memory, Project } from "@parley/shared";
import { Plus, X } from "lucide-react";
import { useId, useRef, useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Input, Textarea } from "../../components/ui/input.tsx";
import { isApiError } from "../../lib/api.ts";
import { formatMemory, type MemoryParse, memoryProblem, parseMemory } from "../../lib/memory.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { asSentence, problemsOf, refusalOf } from "../../lib/refusal.ts";

/**
 * Every problem of the API's refusal of a memory, each a sentence: the editor is the memory's one
 * control, so what it says about `memory.plans.team` is said here, where it is.
 */
function apiProblems(caught: unknown): string {
  return problemsOf(refusalOf(caught))
    .map((problem) =>
      problem.field === "memory" || problem.field?.startsWith("memory.")
        ? memoryProblem(problem.field.slice("memory.".length), problem.message)
        : asSentence(problem.message),
    )
    .join(" ");
}

interface Fact {
  id: number;
  name: string;
  value: string;
}

/** A memory whose values are all text reads as a list of facts; anything else is JSON. */
const isFlat = (memory: Memory): boolean =>
  Object.values(memory).every((value) => typeof value === "string");

/**
 * The facts as a memory, validated as the JSON would be (names, values, size). Blank rows are
 * skipped; a name given twice is refused rather than one value silently winning.
 */
function factsToMemory(facts: readonly Fact[]): MemoryParse {
  const memory: Record<string, string> = {};
  for (const fact of facts) {
    const name = fact.name.trim();
    if (name === "" && fact.value.trim() === "") continue;
    if (name === "") return { ok: false, error: `Give the fact "${fact.value}" a name` };
    if (Object.hasOwn(memory, name)) return { ok: false, error: `"${name}" is named twice` };
    memory[name] = fact.value;
  }
  return parseMemory(JSON.stringify(memory));
}

/**
 * Edits the project's shared memory: as a list of named facts (what most projects keep: the
 * audience, the tone, a product name), or as JSON for nested values. Nothing is sent until it is
 * a valid memory.
 */
export function MemoryEditor({
  project,
  onSaved,
}: {
  project: Project;
  onSaved: (project: Project) => void;
}) {
  const id = useId();
  const nextId = useRef(0);
  const toFacts = (memory: Memory): Fact[] => {
    const facts = Object.entries(memory).map(([name, value]) => ({
      id: nextId.current++,
      name,
      value: String(value),
    }));
    return facts.length > 0 ? facts : [{ id: nextId.current++, name: "", value: "" }];
  };
  const [mode, setMode] = useState<"facts" | "json">(() =>
    isFlat(project.memory) ? "facts" : "json",
  );
  const [facts, setFacts] = useState<Fact[]>(() =>
    isFlat(project.memory) ? toFacts(project.memory) : [],
  );
  const [text, setText] = useState(() => formatMemory(project.memory));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  const edited = () => {
    setSaved(false);
    setError(null);
  };
  const change = (id: number, edit: Partial<Omit<Fact, "id">>) => {
    edited();
    setFacts((all) => all.map((fact) => (fact.id === id ? { ...fact, ...edit } : fact)));
  };
  const current = (): MemoryParse => (mode === "json" ? parseMemory(text) : factsToMemory(facts));

  function switchMode() {
    const parsed = current();
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    if (mode === "facts") {
      setText(formatMemory(parsed.memory));
      setMode("json");
    } else if (isFlat(parsed.memory)) {
      setFacts(toFacts(parsed.memory));
      setMode("facts");
    } else {
      setError("This memory has nested values: it can be edited as JSON only.");
      return;
    }
    setError(null);
  }

  async function save() {
    setSaved(false);
    const parsed = current();
    if (!parsed.ok) {
      setError(parsed.error);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      const updated = await orgsApi.updateProject(project.id, { memory: parsed.memory });
      setText(formatMemory(updated.memory));
      if (mode === "facts") setFacts(toFacts(updated.memory));
      setSaved(true);
      toast.success("Memory saved.");
      onSaved(updated);
    } catch (caught) {
      setError(
        isApiError(caught) && caught.code === "payload_too_large"
          ? `Memory is too large to save: ${refusalOf(caught).message}`
          : apiProblems(caught),
      );
    } finally {
      setBusy(false);
    }
  }

  const described = error ? `${id}-error` : undefined;
  return (
    <form
      className="grid gap-3"
      aria-label="Project memory"
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      {mode === "facts" ? (
        <fieldset className="grid gap-2">
          <legend className="mb-1 font-medium text-sm">Facts the assistant reads</legend>
          <ul className="grid gap-2">
            {facts.map((fact, index) => (
              <li key={fact.id} className="grid gap-1.5 rounded-md border border-border p-2">
                <div className="flex items-center gap-2">
                  <Input
                    aria-label={`Name of fact ${index + 1}`}
                    placeholder="audience"
                    maxLength={100}
                    className="font-medium"
                    value={fact.name}
                    aria-describedby={described}
                    onChange={(event) => change(fact.id, { name: event.target.value })}
                  />
                  <Button
                    type="button"
                    variant="ghost"
                    size="icon"
                    aria-label={`Remove fact ${index + 1}${fact.name ? ` (${fact.name})` : ""}`}
                    onClick={() => {
                      edited();
                      setFacts(facts.filter((f) => f.id !== fact.id));
                    }}
                  >
                    <X aria-hidden="true" />
                  </Button>
                </div>
                <Textarea
                  aria-label={`Value of fact ${index + 1}`}
                  placeholder="founders of small SaaS teams"
                  rows={2}
                  value={fact.value}
                  aria-describedby={described}
                  onChange={(event) => change(fact.id, { value: event.target.value })}
                />
              </li>
            ))}
          </ul>
          <div>
            <Button
              type="button"
              size="sm"
              onClick={() => {
                edited();
                setFacts([...facts, { id: nextId.current++, name: "", value: "" }]);
              }}
            >
              <Plus aria-hidden="true" />
              Add a fact
            </Button>
          </div>
        </fieldset>
      ) : (
        <>
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
            aria-describedby={described}
            onChange={(event) => {
              setText(event.target.value);
              edited();
            }}
          />
        </>
      )}
      {error ? (
        <p id={`${id}-error`} role="alert" className="text-destructive text-sm">
          {asSentence(error)}
        </p>
      ) : null}
      {saved ? (
        <p role="status" className="text-sm text-success">
          Memory saved.
        </p>
      ) : null}
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Saving…" : "Save memory"}
        </Button>
        <Button type="button" variant="ghost" size="sm" onClick={switchMode}>
          {mode === "facts" ? "Edit as JSON" : "Edit as a list"}
        </Button>
      </div>
    </form>
  );
}

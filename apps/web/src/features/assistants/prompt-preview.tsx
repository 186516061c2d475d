import type { Project, PromptAudience } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Field, Select } from "../../components/ui/input.tsx";
import { ErrorNote, Loading, Notice } from "../../components/ui/states.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";

const AUDIENCES: { value: PromptAudience; label: string }[] = [
  { value: "member", label: "A member's chat" },
  { value: "end_user", label: "An app's end user" },
  { value: "preview", label: "The onboarding preview" },
];

const OPEN = "<organization_instructions>\n";
const CLOSE = "\n</organization_instructions>";

/**
 * The prompt in three parts: Parley's text before the tenant's instructions, the instructions,
 * and Parley's after (rules, then the memory as data). Split at the frame Parley writes around
 * them; the instructions cannot contain it (the API defuses it in them), so the split is exact.
 */
export function splitPrompt(system: string): {
  before: string;
  yours: string | null;
  after: string;
} {
  const start = system.indexOf(OPEN);
  const end = system.lastIndexOf(CLOSE);
  if (start < 0 || end < start) return { before: system, yours: null, after: "" };
  return {
    before: system.slice(0, start + OPEN.length),
    yours: system.slice(start + OPEN.length, end),
    after: system.slice(end),
  };
}

/**
 * "The whole prompt the model will see": the system prompt a saved version of the profile gives
 * in a project, for a member's chat, an end user's or the onboarding preview (the API builds it
 * exactly as the agents do). The tenant's instructions are marked inside Parley's scaffolding.
 * Unsaved changes are not in it: the notice says so.
 */
export function PromptPreview({
  profileId,
  version,
  projects,
  dirty,
}: {
  profileId: string;
  version: number;
  projects: readonly Project[];
  dirty: boolean;
}) {
  const id = useId();
  const [chosen, setChosen] = useState<string | null>(null);
  const [audience, setAudience] = useState<PromptAudience>("member");
  const projectId = chosen ?? projects[0]?.id ?? null;
  const preview = useQuery({
    queryKey: keys.promptPreview(profileId, projectId ?? "", audience, version),
    queryFn: () =>
      assistantsApi.promptPreview(profileId, { projectId: projectId ?? "", audience, version }),
    enabled: projectId !== null,
  });
  const parts = preview.data ? splitPrompt(preview.data.system) : null;
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="The whole prompt"
        description={`What the model sees with version ${version}: Parley's frame around your instructions, then the project's memory as data.`}
      />
      <CardBody className="grid gap-3">
        {projects.length === 0 ? (
          <Notice>Create a project to see the prompt with its memory.</Notice>
        ) : (
          <>
            <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-1 xl:grid-cols-2">
              <Field label="Project">
                <Select value={projectId ?? ""} onChange={(event) => setChosen(event.target.value)}>
                  {projects.map((project) => (
                    <option key={project.id} value={project.id}>
                      {project.name}
                    </option>
                  ))}
                </Select>
              </Field>
              <Field label="Who is chatting">
                <Select
                  value={audience}
                  onChange={(event) => setAudience(event.target.value as PromptAudience)}
                >
                  {AUDIENCES.map((option) => (
                    <option key={option.value} value={option.value}>
                      {option.label}
                    </option>
                  ))}
                </Select>
              </Field>
            </div>
            {dirty ? (
              <Notice tone="warning">
                Your unsaved changes are not in this preview yet: save to see them.
              </Notice>
            ) : null}
            {preview.isPending ? (
              <Loading label="Loading the prompt…" lines={6} />
            ) : preview.isError ? (
              <ErrorNote error={preview.error} retry={() => void preview.refetch()} />
            ) : parts ? (
              <figure className="grid gap-1.5">
                <pre
                  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be keyboard-reachable.
                  tabIndex={0}
                  className="max-h-[28rem] overflow-auto whitespace-pre-wrap wrap-anywhere rounded-md border border-border bg-muted/40 p-3 font-mono text-[12px] text-muted-foreground leading-relaxed focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
                >
                  {parts.before}
                  {parts.yours !== null ? (
                    <mark className="rounded-sm bg-primary/10 text-foreground ring-1 ring-primary/25">
                      {parts.yours}
                    </mark>
                  ) : null}
                  {parts.after}
                </pre>
                <figcaption className="flex flex-wrap justify-between gap-2 text-muted-foreground text-xs">
                  <span>
                    {parts.yours === null
                      ? "No instructions: Parley's frame alone."
                      : "Highlighted: your instructions."}
                  </span>
                  <span className="tabular-nums">
                    About {preview.data.tokens.toLocaleString("en-US")} tokens
                  </span>
                </figcaption>
              </figure>
            ) : null}
          </>
        )}
      </CardBody>
    </Card>
  );
}

import { MAX_APP_ORIGINS } from "@parley/shared";
import { useEffect, useId, useRef } from "react";
import { FieldMessage, fieldProps } from "../../components/refusal.tsx";
import { Input, Select, Textarea } from "../../components/ui/input.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { keys } from "../../lib/query.ts";
import { problemsOf, type Refusal, refusalAt } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { type AppDraft, LIMIT_FIELDS } from "./app-draft.ts";

const LIMIT_LABELS = { daily: "Per day", weekly: "Per week", monthly: "Per month" } as const;

/**
 * "Line 2: must use https" for a refusal of one origin (`allowedOrigins.1`), each refused line
 * when several are ("Line 2: ... Line 4: ...").
 */
function originsMessage(refusal: Refusal | null): string | null {
  const messages = problemsOf(refusal).flatMap((problem) => {
    if (problem.field === "allowedOrigins") return [problem.message];
    const index = /^allowedOrigins\.(\d+)$/.exec(problem.field ?? "")?.[1];
    return index === undefined ? [] : [`Line ${Number(index) + 1}: ${problem.message}`];
  });
  return messages.length === 0 ? null : messages.join(". ");
}

/** The API's fields `AppFields` shows at a control (the rest go to the form's alert). */
export const APP_FIELDS = [
  "name",
  "allowedOrigins",
  "projectIds",
  "profileId",
  ...LIMIT_FIELDS.map(([, field]) => field),
];

/**
 * An app's settings: its name, the pages that may embed it, the projects its end users chat in,
 * the profile they run, what each end user may spend and whether they see what replies cost.
 */
export function AppFields({
  orgId,
  draft,
  onChange,
  refusal,
}: {
  orgId: string;
  draft: AppDraft;
  onChange: (next: AppDraft) => void;
  refusal: Refusal | null;
}) {
  const id = useId();
  const set = (patch: Partial<AppDraft>) => onChange({ ...draft, ...patch });
  const projects = usePaged(keys.projects(orgId), (cursor) => orgsApi.projects(orgId, cursor));
  const profiles = usePaged(keys.profiles(orgId), (cursor) =>
    assistantsApi.profiles(orgId, cursor),
  );
  // A new app in an org with exactly one project: that project, checked (an app needs one, and
  // there is no other to choose). Once: unchecking it afterwards is the person's to do.
  const prefilled = useRef(draft.projectIds.length > 0);
  const only = projects.items.length === 1 && !projects.more.hasMore ? projects.items[0] : null;
  useEffect(() => {
    if (prefilled.current || !only) return;
    prefilled.current = true;
    onChange({ ...draft, projectIds: [only.id] });
  }, [only, draft, onChange]);
  const origins = originsMessage(refusal);
  const projectsMessage = refusalAt(refusal, "projectIds");
  const profileMessage = refusalAt(refusal, "profileId");
  return (
    <div className="grid min-w-0 gap-4">
      <div className="grid gap-1.5">
        <label htmlFor={`${id}-name`} className="font-medium text-sm">
          Name
        </label>
        <Input
          id={`${id}-name`}
          placeholder="Acme Shop"
          value={draft.name}
          onChange={(event) => set({ name: event.target.value })}
          {...fieldProps(`${id}-name`, refusalAt(refusal, "name"))}
        />
        <FieldMessage id={`${id}-name`} message={refusalAt(refusal, "name")} />
      </div>
      <div className="grid gap-1.5">
        <label htmlFor={`${id}-origins`} className="font-medium text-sm">
          Allowed origins
        </label>
        <Textarea
          id={`${id}-origins`}
          className="font-mono text-xs"
          rows={3}
          spellCheck={false}
          placeholder={"https://shop.example.com\nhttp://localhost:5173"}
          value={draft.origins}
          onChange={(event) => set({ origins: event.target.value })}
          {...fieldProps(`${id}-origins`, origins)}
        />
        <span className="text-muted-foreground text-xs">
          One per line, exactly as a browser sends it: scheme, host and a port only when not the
          default, no path. https, or http for localhost. At most {MAX_APP_ORIGINS}.
        </span>
        <FieldMessage id={`${id}-origins`} message={origins} />
      </div>
      <fieldset className="grid gap-1.5" {...fieldProps(`${id}-projects`, projectsMessage)}>
        <legend className="mb-1.5 font-medium text-sm">Projects its end users chat in</legend>
        {projects.items.length === 0 ? (
          <span className="text-muted-foreground text-sm">
            {projects.query.isPending ? "Loading projects…" : "The org has no projects yet."}
          </span>
        ) : (
          <div className="grid gap-1 sm:grid-cols-2">
            {projects.items.map((project) => (
              <label key={project.id} className="flex min-w-0 items-center gap-2 text-sm">
                <input
                  type="checkbox"
                  checked={draft.projectIds.includes(project.id)}
                  onChange={(event) =>
                    set({
                      projectIds: event.target.checked
                        ? [...draft.projectIds, project.id]
                        : draft.projectIds.filter((projectId) => projectId !== project.id),
                    })
                  }
                />
                <span className="truncate">{project.name}</span>
              </label>
            ))}
          </div>
        )}
        <span className="text-muted-foreground text-xs">
          At least one: your end users' chats are kept and billed in a project (its documents,
          profile and tools apply). New chats go to the first one checked.
        </span>
        <FieldMessage id={`${id}-projects`} message={projectsMessage} />
      </fieldset>
      <div className="grid gap-1.5">
        <label htmlFor={`${id}-profile`} className="font-medium text-sm">
          Assistant profile
        </label>
        <Select
          id={`${id}-profile`}
          value={draft.profileId}
          onChange={(event) => set({ profileId: event.target.value })}
          {...fieldProps(`${id}-profile`, profileMessage)}
        >
          <option value="">The project's own</option>
          {profiles.items.map((profile) => (
            <option key={profile.id} value={profile.id}>
              {profile.name}
            </option>
          ))}
        </Select>
        <FieldMessage id={`${id}-profile`} message={profileMessage} />
      </div>
      <fieldset className="grid gap-1.5">
        <legend className="mb-1.5 font-medium text-sm">Spend limit per end user (US$)</legend>
        <div className="grid gap-3 sm:grid-cols-3">
          {LIMIT_FIELDS.map(([key, field]) => {
            const message = refusalAt(refusal, field);
            return (
              <div key={key} className="grid content-start gap-1">
                <label htmlFor={`${id}-${key}`} className="text-sm">
                  {LIMIT_LABELS[key]}
                </label>
                <Input
                  id={`${id}-${key}`}
                  inputMode="decimal"
                  placeholder="No limit"
                  value={draft[key]}
                  onChange={(event) => set({ [key]: event.target.value })}
                  {...fieldProps(`${id}-${key}`, message)}
                />
                <FieldMessage id={`${id}-${key}`} message={message} />
              </div>
            );
          })}
        </div>
        <span className="text-muted-foreground text-xs">
          UTC day, week from Monday and month. Empty: no limit.
        </span>
      </fieldset>
      <label className="flex items-start gap-2 text-sm">
        <input
          type="checkbox"
          className="mt-1"
          checked={draft.showCost}
          onChange={(event) => set({ showCost: event.target.checked })}
        />
        <span className="grid">
          <span className="font-medium">Show cost to end users</span>
          <span className="text-muted-foreground text-xs">
            Off: replies carry no price and their chats show no spend.
          </span>
        </span>
      </label>
    </div>
  );
}

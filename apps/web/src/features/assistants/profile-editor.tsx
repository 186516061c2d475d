import type { AssistantProfile, CatalogueModel, Project } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useId, useState } from "react";
import { toast } from "sonner";
import { RefusalNote } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Input } from "../../components/ui/input.tsx";
import { Notice } from "../../components/ui/states.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";
import {
  asSentence,
  type Problem,
  problemsOf,
  type Refusal,
  refusalOf,
  refusalOfProblems,
} from "../../lib/refusal.ts";
import { SourceToolsField } from "../tools/source-tools-field.tsx";
import { ConversationFields, ToolsField } from "./conversation-fields.tsx";
import { InstructionsField } from "./instructions-field.tsx";
import { KnowledgeRetrievalField } from "./knowledge-retrieval-field.tsx";
import { ModelFields } from "./model-fields.tsx";
import { refusalWords } from "./model-words.ts";
import {
  changesOf,
  checkDraft,
  type DraftErrors,
  type DraftField,
  draftOf,
  isDirty,
  type ProfileDraft,
} from "./profile-draft.ts";
import { PromptPreview } from "./prompt-preview.tsx";
import { VersionHistory } from "./version-history.tsx";

/** The field an API refusal names (`instructions`, `suggestions.2`, `models`…), if the form has it. */
function refusalField(field: string | undefined): DraftField | null {
  if (!field) return null;
  if (/^suggestions\.\d+$/.test(field)) return field as DraftField;
  const known = [
    "name",
    "instructions",
    "model",
    "temperature",
    "topP",
    "maxOutputTokens",
    "welcome",
    "suggestions",
    "tools",
  ];
  const head = field.split(".")[0] ?? "";
  return known.includes(head) ? (head as DraftField) : null;
}

/** Errors by field as sentences: the checks and the API write clauses ("Give the profile a name"). */
const asSentences = (errors: DraftErrors): DraftErrors =>
  Object.fromEntries(
    Object.entries(errors).map(([field, message]) => [field, message && asSentence(message)]),
  );

/**
 * The profile editor: name and instructions, model and sampling, how a chat opens, knowledge
 * retrieval, tools; beside them the whole prompt and the version history. Saving sends only what
 * changed, with the version it edits (someone else's save meanwhile is a 409, said as such,
 * nothing lost); the result is a new version. Members read it all, with nothing to change.
 */
export function ProfileEditor({
  profile,
  models,
  names,
  projects,
  canManage,
}: {
  profile: AssistantProfile;
  /** The org's allowed models. */
  models: readonly CatalogueModel[];
  /** Every model known (names of models no longer allowed). */
  names: readonly CatalogueModel[];
  projects: readonly Project[];
  canManage: boolean;
}) {
  const id = useId();
  const queryClient = useQueryClient();
  // The version the form's edits start from: a save names it, so a save by someone else since
  // is refused (409) rather than overwritten.
  const [based, setBased] = useState<AssistantProfile>(profile);
  const [draft, setDraft] = useState<ProfileDraft>(() => draftOf(profile));
  const [errors, setErrors] = useState<DraftErrors>({});
  const [failure, setFailure] = useState<Refusal | null>(null);
  const [busy, setBusy] = useState(false);
  const dirty = isDirty(based, draft);
  const readOnly = !canManage;
  const stale = profile.version !== based.version;

  // A newer version arrived (saved in another tab or by someone else, seen on a refetch): an
  // untouched form follows it; a form with edits keeps them and says what happened.
  useEffect(() => {
    if (stale && !dirty) {
      setBased(profile);
      setDraft(draftOf(profile));
    }
  }, [stale, dirty, profile]);

  const load = (next: AssistantProfile) => {
    setBased(next);
    setDraft(draftOf(next));
    setErrors({});
    setFailure(null);
  };

  const edit = (patch: Partial<ProfileDraft>) => {
    setDraft((current) => ({ ...current, ...patch }));
    setErrors((current) => {
      const next = { ...current };
      for (const key of Object.keys(patch)) {
        delete next[key as DraftField];
        if (key === "suggestions") {
          for (const field of Object.keys(next))
            if (field.startsWith("suggestions")) delete next[field as DraftField];
        }
        if (key === "model") {
          delete next.temperature;
          delete next.topP;
          delete next.maxOutputTokens;
        }
      }
      return next;
    });
    setFailure(null);
  };

  async function save() {
    const model = models.find((candidate) => candidate.id === draft.model);
    const checked = checkDraft(draft, model);
    if (!checked.ok) {
      setErrors(asSentences(checked.errors));
      return;
    }
    const changes = changesOf(based, checked.content);
    if (Object.keys(changes).length === 0) {
      setDraft(draftOf(based));
      return;
    }
    setBusy(true);
    setFailure(null);
    try {
      const updated = await assistantsApi.updateProfile(profile.id, {
        ...changes,
        baseVersion: based.version,
      });
      queryClient.setQueryData(keys.profile(profile.id), updated);
      void queryClient.invalidateQueries({ queryKey: keys.profileVersions(profile.id) });
      void queryClient.invalidateQueries({ queryKey: keys.profiles(profile.orgId) });
      load(updated);
      toast.success(`Saved as version ${updated.version}.`);
    } catch (error) {
      // Every problem the API names: each under its field when the editor has it, the rest
      // (a version conflict, a field it has not) in the alert, each a sentence of its own
      // (`refusalWords` names models by name and starts with a capital).
      const atFields: DraftErrors = {};
      const rest: Problem[] = [];
      for (const problem of problemsOf(refusalOf(error))) {
        const field = refusalField(problem.field ?? undefined);
        const words = refusalWords(problem.message, names);
        if (field && atFields[field] === undefined) atFields[field] = asSentence(words);
        else rest.push({ ...problem, message: words });
      }
      setErrors(atFields);
      setFailure(refusalOfProblems(rest));
    } finally {
      setBusy(false);
    }
  }

  const model = models.find((candidate) => candidate.id === draft.model);
  const otherErrors = Object.keys(errors).length;
  return (
    <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_24rem] xl:grid-cols-[minmax(0,1fr)_28rem]">
      <form
        noValidate
        aria-label="Assistant profile"
        className="grid min-w-0 content-start gap-6"
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        {readOnly ? (
          <Notice>
            Only owners and admins change profiles. You can read this one and its history.
          </Notice>
        ) : null}
        {stale && dirty ? (
          <Notice
            tone="warning"
            action={
              <Button size="sm" onClick={() => load(profile)}>
                Load version {profile.version}
              </Button>
            }
          >
            {profile.updatedByLabel} saved version {profile.version} while you were editing version{" "}
            {based.version}. Your changes would overwrite theirs, so saving them is refused: load
            version {profile.version} (your changes are discarded) and make them again.
          </Notice>
        ) : null}
        <Card aria-labelledby={`${id}-voice`}>
          <CardHeader id={`${id}-voice`} title="Name and instructions" />
          <CardBody className="grid gap-5">
            <div className="grid gap-1.5">
              <label htmlFor={`${id}-name`} className="font-medium text-sm">
                Name
              </label>
              <Input
                id={`${id}-name`}
                maxLength={100}
                readOnly={readOnly}
                value={draft.name}
                aria-invalid={errors.name !== undefined}
                aria-describedby={errors.name ? `${id}-name-error` : undefined}
                onChange={(event) => edit({ name: event.target.value })}
              />
              {errors.name ? (
                <p id={`${id}-name-error`} role="alert" className="text-destructive text-sm">
                  {errors.name}
                </p>
              ) : null}
            </div>
            <InstructionsField
              value={draft.instructions}
              onChange={(instructions) => edit({ instructions })}
              error={errors.instructions}
              readOnly={readOnly}
            />
          </CardBody>
        </Card>
        <Card aria-labelledby={`${id}-model`}>
          <CardHeader
            id={`${id}-model`}
            title="Model and parameters"
            description="Prices are what your organization is charged per million tokens."
          />
          <CardBody>
            <ModelFields
              models={models}
              names={names}
              value={draft.model}
              onModel={(next) => edit({ model: next })}
              numbers={draft}
              onNumbers={(numbers) => edit(numbers)}
              errors={errors}
              readOnly={readOnly}
            />
          </CardBody>
        </Card>
        <Card aria-labelledby={`${id}-start`}>
          <CardHeader id={`${id}-start`} title="How a chat starts" />
          <CardBody>
            <ConversationFields
              welcome={draft.welcome}
              suggestions={draft.suggestions}
              onWelcome={(welcome) => edit({ welcome })}
              onSuggestions={(suggestions) => edit({ suggestions })}
              errors={errors}
              readOnly={readOnly}
            />
          </CardBody>
        </Card>
        <Card aria-labelledby={`${id}-knowledge`}>
          <CardHeader id={`${id}-knowledge`} title="Knowledge" />
          <CardBody>
            <KnowledgeRetrievalField
              on={draft.knowledgeRetrieval}
              onChange={(knowledgeRetrieval) => edit({ knowledgeRetrieval })}
              readOnly={readOnly}
            />
          </CardBody>
        </Card>
        <Card aria-labelledby={`${id}-tools`}>
          <CardHeader id={`${id}-tools`} title="Tools" />
          <CardBody className="grid gap-6">
            <ToolsField
              tools={draft.tools}
              onChange={(tools) => edit({ tools })}
              modelHasTools={model?.capabilities.tools ?? true}
              error={errors.tools}
              readOnly={readOnly}
            />
            <SourceToolsField
              orgId={profile.orgId}
              tools={draft.tools}
              onChange={(tools) => edit({ tools })}
              readOnly={readOnly}
            />
          </CardBody>
        </Card>
        {readOnly ? null : (
          // Held at the bottom of the screen while there is something to save; at rest, the
          // form's last row.
          <div
            className={
              dirty || otherErrors > 0
                ? "sticky bottom-0 z-10 -mx-4 border-border border-t bg-background/95 px-4 py-3 shadow-[0_-4px_12px_-6px_rgb(0_0_0/0.15)] backdrop-blur sm:mx-0 sm:rounded-xl sm:border"
                : "px-1"
            }
          >
            <div className="flex flex-wrap items-center gap-2">
              <p className="mr-auto text-sm" aria-live="polite">
                {otherErrors > 0 ? (
                  <span className="text-destructive">
                    {otherErrors === 1 ? "One field needs" : `${otherErrors} fields need`}{" "}
                    attention.
                  </span>
                ) : dirty ? (
                  "Unsaved changes"
                ) : (
                  <span className="text-muted-foreground">Version {based.version} · saved</span>
                )}
              </p>
              {dirty ? (
                <Button variant="ghost" disabled={busy} onClick={() => load(profile)}>
                  Discard
                </Button>
              ) : null}
              <Button type="submit" variant="primary" disabled={busy || !dirty}>
                {busy ? "Saving…" : `Save as version ${based.version + 1}`}
              </Button>
            </div>
            {failure ? (
              <div className="pt-2">
                <RefusalNote refusal={failure} />
              </div>
            ) : null}
          </div>
        )}
      </form>
      <div className="grid min-w-0 content-start gap-6">
        <PromptPreview
          profileId={profile.id}
          version={profile.version}
          projects={projects}
          dirty={dirty}
        />
        <VersionHistory
          profile={profile}
          names={names}
          canManage={canManage}
          dirty={dirty}
          onRestored={load}
        />
      </div>
    </div>
  );
}

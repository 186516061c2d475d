import type { AssistantProfile, CatalogueModel } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { Bot, Plus } from "lucide-react";
import { useId, useState } from "react";
import { LoadMore } from "../../components/load-more.tsx";
import { FieldMessage, fieldProps, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { Input } from "../../components/ui/input.tsx";
import {
  SelectMenu,
  SelectMenuContent,
  SelectMenuTrigger,
  SelectMenuValue,
} from "../../components/ui/select-menu.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { ModelItems } from "./model-select.tsx";
import { modelName, refusalWords } from "./model-words.ts";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });

/** Where a profile runs, in words: "Default in 2 projects", "Org preview". */
function usesOf(profile: AssistantProfile): string[] {
  const { projects, previewProjects, apps, orgPreview } = profile.usedBy;
  const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? "" : "s"}`;
  return [
    projects.length > 0 ? `Default in ${plural(projects.length, "project")}` : null,
    previewProjects.length > 0 ? `Preview of ${plural(previewProjects.length, "project")}` : null,
    apps.length > 0 ? `${plural(apps.length, "app")}` : null,
    orgPreview ? "Org preview" : null,
  ].filter((use) => use !== null);
}

/** A new profile: a name and one of the allowed models; the rest is edited in the editor. */
export function NewProfileDialog({
  orgId,
  models,
}: {
  orgId: string;
  models: readonly CatalogueModel[];
}) {
  const id = useId();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState("");
  const [model, setModel] = useState<string | null>(null);
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const chosen = model ?? models[0]?.id ?? "";
  // The API names a refused model by its id: said with its name.
  const modelProblem = at("model") && refusalWords(at("model") ?? "", models);
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        clear();
      }}
    >
      <DialogTrigger asChild>
        <Button variant="primary">
          <Plus aria-hidden="true" />
          New profile
        </Button>
      </DialogTrigger>
      <DialogContent
        title="New assistant profile"
        description="Give it a name and a model; its instructions, welcome and tools come next."
      >
        <form
          ref={form}
          className="grid gap-4"
          onSubmit={async (event) => {
            event.preventDefault();
            setBusy(true);
            clear();
            try {
              const created = await assistantsApi.createProfile(orgId, { name, model: chosen });
              queryClient.setQueryData(keys.profile(created.id), created);
              void queryClient.invalidateQueries({ queryKey: keys.profiles(orgId) });
              setOpen(false);
              await navigate({
                to: "/assistants/profiles/$profileId",
                params: { profileId: created.id },
              });
            } catch (caught) {
              refuse(caught);
            } finally {
              setBusy(false);
            }
          }}
        >
          <div className="grid gap-1.5">
            <label htmlFor={`${id}-name`} className="font-medium text-sm">
              Name
            </label>
            <Input
              id={`${id}-name`}
              required
              maxLength={100}
              placeholder="Support assistant"
              value={name}
              onChange={(event) => setName(event.target.value)}
              {...fieldProps(`${id}-name`, at("name"))}
            />
            <FieldMessage id={`${id}-name`} message={at("name")} />
          </div>
          <div className="grid gap-1.5">
            <span id={`${id}-model`} className="font-medium text-sm">
              Model
            </span>
            <SelectMenu value={chosen} onValueChange={setModel}>
              <SelectMenuTrigger
                aria-labelledby={`${id}-model`}
                {...fieldProps(`${id}-model`, modelProblem, `${id}-model-hint`)}
              >
                <SelectMenuValue>{modelName(models, chosen)}</SelectMenuValue>
              </SelectMenuTrigger>
              <SelectMenuContent>
                <ModelItems models={models} />
              </SelectMenuContent>
            </SelectMenu>
            <FieldMessage id={`${id}-model`} message={modelProblem} />
            <p id={`${id}-model-hint`} className="text-muted-foreground text-xs">
              Only the models this organization allows are listed. Allow more under{" "}
              <Link
                to="/assistants"
                hash="models"
                className="prose-link"
                onClick={() => setOpen(false)}
              >
                Assistants → Models
              </Link>
              .
            </p>
          </div>
          <RefusalNote refusal={refusal} fields={["name", "model"]} />
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" disabled={busy || name.trim() === ""}>
              {busy ? "Creating…" : "Create profile"}
            </Button>
          </div>
        </form>
      </DialogContent>
    </Dialog>
  );
}

/**
 * The org's assistant profiles: each with its model, current version, who saved it and where it
 * runs. Owners and admins create one here and edit it on its page; members read them.
 */
export function ProfileList({
  orgId,
  canManage,
  names,
}: {
  orgId: string;
  canManage: boolean;
  names: readonly CatalogueModel[];
}) {
  const id = useId();
  const { query, items, more, firstPageError } = usePaged(keys.profiles(orgId), (cursor) =>
    assistantsApi.profiles(orgId, cursor),
  );
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Assistant profiles"
        description="A profile is your assistant's instructions, model and opening. A project runs one for its chats; without one, Parley's built-in assistant answers."
      />
      <CardBody className="pt-3">
        {query.isPending ? (
          <Loading label="Loading profiles…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState icon={<Bot />} title="No profiles yet">
            {canManage
              ? "Create one to give your assistant its own voice, rules and model, then choose it in a project."
              : "Owners and admins create them. Until then, Parley's built-in assistant answers."}
          </EmptyState>
        ) : (
          <>
            <ul className="grid divide-y divide-border">
              {items.map((profile) => (
                <li key={profile.id}>
                  <Link
                    to="/assistants/profiles/$profileId"
                    params={{ profileId: profile.id }}
                    className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2 rounded-md px-2 py-3 hover:bg-accent"
                  >
                    <span className="grid min-w-0 gap-0.5">
                      <span className="truncate font-medium">{profile.name}</span>
                      <span className="text-muted-foreground text-xs">
                        {modelName(names, profile.model)} · version {profile.version} · saved by{" "}
                        {profile.updatedByLabel}, {when.format(new Date(profile.updatedAt))}
                      </span>
                    </span>
                    <span className="flex flex-wrap gap-1">
                      {usesOf(profile).map((use) => (
                        <Badge key={use} tone="info">
                          {use}
                        </Badge>
                      ))}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
            <LoadMore more={more} label="More profiles" />
          </>
        )}
      </CardBody>
    </Card>
  );
}

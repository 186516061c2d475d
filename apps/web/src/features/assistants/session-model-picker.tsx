import type { CatalogueModel, Session } from "@parley/shared";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Cpu, TriangleAlert } from "lucide-react";
import { toast } from "sonner";
import {
  SelectMenu,
  SelectMenuContent,
  SelectMenuGroup,
  SelectMenuItem,
  SelectMenuLabel,
  SelectMenuSeparator,
  SelectMenuTrigger,
  SelectMenuValue,
} from "../../components/ui/select-menu.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";
import { useSession } from "../../lib/session.tsx";
import { ModelItems, modelDetail } from "./model-select.tsx";
import { modelName, modelRefusalSentences, shortName } from "./model-words.ts";
import { useAllowedModels, useCatalogue, useProjectModel } from "./use-models.ts";

/** The option for "no pick": the session follows its project's profile. */
const DEFAULT = "default";

/**
 * The chat's model picker (a member's own session; never in the embed, where the app's profile
 * decides): the models the org allows, each with its price per million tokens in and out, and
 * "Default", the model of the project's profile. Choosing one sets it for this session
 * (`PATCH /api/sessions/:id { model }`): the next reply runs on it. A pick the org no longer
 * allows is shown as such (its next turn would be refused), so the person picks another.
 */
export function SessionModelPicker({ session }: { session: Session }) {
  const { me } = useSession();
  const queryClient = useQueryClient();
  const allowed = useAllowedModels(session.orgId);
  const catalogue = useCatalogue();
  const fallback = useProjectModel(session.projectId);
  const models = allowed.data?.items ?? [];
  const names: readonly CatalogueModel[] = [...models, ...(catalogue.data?.items ?? [])];
  const pick = useMutation({
    mutationFn: (model: string | null) => assistantsApi.setSessionModel(session.id, model),
    onSuccess: (updated) => {
      queryClient.setQueryData(keys.session(session.id), updated);
      const next = updated.model ?? fallback.model;
      toast.success(
        `Replies in this chat now use ${next ? modelName(names, next) : "the profile's model"}.`,
      );
    },
    onError: (error) => toast.error(modelRefusalSentences(error, names).join(" ")),
  });

  const chosen = pick.isPending ? pick.variables : session.model;
  const current = chosen ?? fallback.model;
  const currentName = current ? modelName(names, current) : "Model";
  const notAllowed =
    chosen !== null && allowed.data !== undefined && !models.some((m) => m.id === chosen);
  const defaultModel = fallback.model
    ? (models.find((model) => model.id === fallback.model) ??
      catalogue.data?.items.find((model) => model.id === fallback.model))
    : undefined;
  const label = `Model: ${currentName}${notAllowed ? " (no longer allowed: pick another)" : ""}`;

  // Only the session's owner picks its model (the API refuses anyone else).
  if (me?.id !== session.ownerId) {
    return (
      <span
        className="hidden min-w-0 truncate text-muted-foreground text-sm sm:inline"
        title={label}
      >
        {currentName}
      </span>
    );
  }
  return (
    <SelectMenu
      value={chosen ?? DEFAULT}
      onValueChange={(value) => pick.mutate(value === DEFAULT ? null : value)}
      disabled={pick.isPending || !allowed.data}
    >
      <SelectMenuTrigger
        variant="ghost"
        aria-label={label}
        title={label}
        // Narrow on a phone: the header also holds the title, the Tool calls button and the spend,
        // and the title was left "Wher..." at 390 px (outside probe, 2026-12-06).
        className={notAllowed ? "max-w-28 text-warning sm:max-w-64" : "max-w-28 sm:max-w-64"}
      >
        {notAllowed ? (
          <TriangleAlert aria-hidden="true" className="size-4 shrink-0" />
        ) : (
          <Cpu
            aria-hidden="true"
            className="hidden size-4 shrink-0 text-muted-foreground sm:block"
          />
        )}
        <SelectMenuValue>
          <span className="sm:hidden">{shortName(currentName)}</span>
          <span className="hidden sm:inline">{currentName}</span>
        </SelectMenuValue>
      </SelectMenuTrigger>
      <SelectMenuContent align="end" className="w-[25rem]">
        <SelectMenuItem
          value={DEFAULT}
          detail={
            defaultModel
              ? modelDetail(
                  defaultModel,
                  fallback.profileName
                    ? `The “${fallback.profileName}” profile's model`
                    : "The project's model",
                )
              : "The project's assistant profile decides"
          }
        >
          {`Default${fallback.model ? ` (${modelName(names, fallback.model)})` : ""}`}
        </SelectMenuItem>
        {notAllowed && chosen ? (
          <SelectMenuItem value={chosen} disabled detail="No longer allowed in your organization">
            {modelName(names, chosen)}
          </SelectMenuItem>
        ) : null}
        <SelectMenuSeparator />
        <SelectMenuGroup>
          <SelectMenuLabel>Models your organization allows</SelectMenuLabel>
          <ModelItems models={models} />
        </SelectMenuGroup>
      </SelectMenuContent>
    </SelectMenu>
  );
}

import type { AssistantProfile, CatalogueModel, ProfileVersion } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { History, RotateCcw } from "lucide-react";
import { useId, useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Dialog, DialogContent } from "../../components/ui/dialog.tsx";
import { Field, Select } from "../../components/ui/input.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { keys } from "../../lib/query.ts";
import { refusalText } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { modelName } from "./model-words.ts";
import { VersionDiff } from "./version-diff.tsx";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/**
 * A profile's versions, newest first: who saved each and when, which one a rollback copied; a diff
 * of any version against the current one, and (owners and admins) a restore of an earlier one,
 * behind a confirmation. A restore is a new version equal to the old one: the history only grows.
 */
export function VersionHistory({
  profile,
  names,
  canManage,
  dirty,
  onRestored,
}: {
  profile: AssistantProfile;
  names: readonly CatalogueModel[];
  canManage: boolean;
  /** Unsaved edits in the form: a restore replaces them, and the confirmation says so. */
  dirty: boolean;
  onRestored: (profile: AssistantProfile) => void;
}) {
  const id = useId();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const { query, items, more, firstPageError } = usePaged(
    keys.profileVersions(profile.id),
    (cursor) => assistantsApi.versions(profile.id, cursor),
  );
  const [comparing, setComparing] = useState<number | null>(null);
  const [busy, setBusy] = useState(false);

  async function restore(version: ProfileVersion) {
    const ok = await confirm({
      title: `Restore version ${version.version}?`,
      description: `The profile becomes what version ${version.version} said, as a new version ${profile.version + 1}; every chat that runs it follows from its next reply. Version ${profile.version} stays in the history.${dirty ? " Your unsaved changes in the form are discarded." : ""}`,
      confirmLabel: `Restore version ${version.version}`,
    });
    if (!ok) return;
    setBusy(true);
    try {
      const updated = await assistantsApi.rollback(profile.id, version.version);
      queryClient.setQueryData(keys.profile(profile.id), updated);
      await queryClient.invalidateQueries({ queryKey: keys.profileVersions(profile.id) });
      void queryClient.invalidateQueries({ queryKey: keys.profiles(profile.orgId) });
      setComparing(null);
      onRestored(updated);
      toast.success(`Restored version ${version.version} as version ${updated.version}.`);
    } catch (error) {
      toast.error(refusalText(error));
    } finally {
      setBusy(false);
    }
  }

  const compared = items.find((item) => item.version === comparing);
  const current = items.find((item) => item.version === profile.version) ?? profile;
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Version history"
        description="Every save is a new version. Compare any of them with the current one."
      />
      <CardBody className="grid gap-3">
        {query.isPending ? (
          <Loading label="Loading versions…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : (
          <>
            <ol className="grid divide-y divide-border" aria-label="Versions">
              {items.map((version) => {
                const isCurrent = version.version === profile.version;
                return (
                  <li
                    key={version.version}
                    className="flex flex-wrap items-center gap-x-3 gap-y-1.5 py-2.5"
                  >
                    <div className="grid min-w-0 flex-1 gap-0.5">
                      <span className="flex flex-wrap items-center gap-2 font-medium text-sm">
                        Version {version.version}
                        {isCurrent ? <Badge tone="success">Current</Badge> : null}
                        {version.restoredFrom !== null ? (
                          <Badge>
                            <RotateCcw aria-hidden="true" className="size-3" />
                            Restored v{version.restoredFrom}
                          </Badge>
                        ) : null}
                      </span>
                      <span className="text-muted-foreground text-xs">
                        {version.authorLabel} · {when.format(new Date(version.createdAt))} ·{" "}
                        {modelName(names, version.model)}
                      </span>
                    </div>
                    {isCurrent ? null : (
                      <div className="flex gap-1">
                        <Button
                          size="sm"
                          variant="ghost"
                          aria-label={`Compare version ${version.version} with the current version`}
                          onClick={() => setComparing(version.version)}
                        >
                          Compare
                        </Button>
                        {canManage ? (
                          <Button
                            size="sm"
                            variant="ghost"
                            disabled={busy}
                            aria-label={`Restore version ${version.version}`}
                            onClick={() => void restore(version)}
                          >
                            Restore
                          </Button>
                        ) : null}
                      </div>
                    )}
                  </li>
                );
              })}
            </ol>
            {items.length === 1 ? (
              <p className="flex items-center gap-2 text-muted-foreground text-sm">
                <History aria-hidden="true" className="size-4" />
                Save a change and it appears here as version {profile.version + 1}.
              </p>
            ) : null}
            <LoadMore more={more} label="Earlier versions" />
          </>
        )}
      </CardBody>
      <Dialog open={compared !== undefined} onOpenChange={(open) => !open && setComparing(null)}>
        {compared ? (
          <DialogContent
            size="lg"
            title={`Version ${compared.version} → version ${profile.version} (current)`}
            description={`Saved by ${compared.authorLabel} on ${when.format(new Date(compared.createdAt))}. Red is what version ${compared.version} said; green is what the profile says now.`}
          >
            <Field label="Compare the current version with" className="max-w-xs">
              <Select
                value={String(compared.version)}
                onChange={(event) => setComparing(Number(event.target.value))}
              >
                {items
                  .filter((item) => item.version !== profile.version)
                  .map((item) => (
                    <option key={item.version} value={item.version}>
                      Version {item.version} · {item.authorLabel}
                    </option>
                  ))}
              </Select>
            </Field>
            <VersionDiff
              before={compared}
              after={current}
              beforeLabel={`Version ${compared.version}`}
              afterLabel={`Version ${profile.version}`}
              names={names}
            />
            {canManage ? (
              <div className="flex justify-end">
                <Button variant="primary" disabled={busy} onClick={() => void restore(compared)}>
                  <RotateCcw aria-hidden="true" />
                  Restore version {compared.version}
                </Button>
              </div>
            ) : null}
          </DialogContent>
        ) : null}
      </Dialog>
    </Card>
  );
}

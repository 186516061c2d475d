import type { CatalogueModel } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useId, useMemo, useState } from "react";
import { toast } from "sonner";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote, Loading, ProblemNote } from "../../components/ui/states.tsx";
import { num, Table, TBody, Td, THead, Th, Tr } from "../../components/ui/table.tsx";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { cn } from "../../lib/cn.ts";
import { keys } from "../../lib/query.ts";
import { useMediaQuery } from "../../lib/use-media-query.ts";
import {
  capabilityWords,
  LOCAL_MODEL_NOTE,
  modelRefusalSentences,
  perMTok,
  tokensExact,
  tokensShort,
} from "./model-words.ts";
import { useAllowedModels, useCatalogue } from "./use-models.ts";

/** Every figure of a model that a person compares, as label and value. */
function figures(model: CatalogueModel): { label: string; value: string }[] {
  const { prices } = model;
  return [
    { label: "Input", value: perMTok(prices.promptMicrosPerMTok) },
    { label: "Output", value: perMTok(prices.completionMicrosPerMTok) },
    ...(prices.cacheReadMicrosPerMTok === null
      ? []
      : [{ label: "Cache read", value: perMTok(prices.cacheReadMicrosPerMTok) }]),
    ...(prices.cacheWriteMicrosPerMTok === null
      ? []
      : [{ label: "Cache write", value: perMTok(prices.cacheWriteMicrosPerMTok) }]),
    ...(prices.reasoningMicrosPerMTok === null
      ? []
      : [{ label: "Reasoning", value: perMTok(prices.reasoningMicrosPerMTok) }]),
    ...(prices.requestMicros > 0
      ? [{ label: "Per call", value: perMTok(prices.requestMicros) }]
      : []),
  ];
}

/** Cache rates, or a dash: most models list none (cached input is then billed as input). */
const cacheWords = (model: CatalogueModel): string => {
  const read = model.prices.cacheReadMicrosPerMTok;
  const write = model.prices.cacheWriteMicrosPerMTok;
  if (read === null && write === null) return "—";
  return `${read === null ? "—" : perMTok(read)} / ${write === null ? "—" : perMTok(write)}`;
};

function ModelBadges({ model, defaultModel }: { model: CatalogueModel; defaultModel?: string }) {
  return (
    <>
      {model.id === defaultModel ? <Badge tone="info">Platform default</Badge> : null}
      {model.freePreview ? (
        <Badge title="The free onboarding preview may run it (Parley pays for the preview)">
          Free preview
        </Badge>
      ) : null}
      {model.servedLocally ? <Badge title={LOCAL_MODEL_NOTE}>Local dev model</Badge> : null}
    </>
  );
}

/**
 * The models an org's members may use (owners and admins choose; members read the list): the
 * catalogue with what the org is charged per million tokens (input, output, cache read and write
 * and reasoning where the model lists them), context window, maximum output and capabilities. A
 * refusal is shown as the API words it, models named by their display names (409: a profile a
 * project or app runs uses a model being left out).
 */
export function AllowedModels({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const id = useId();
  const queryClient = useQueryClient();
  const allowed = useAllowedModels(orgId);
  const catalogue = useCatalogue(canManage);
  const wide = useMediaQuery("(min-width: 48rem)");
  const saved = useMemo(() => allowed.data?.items.map((model) => model.id) ?? [], [allowed.data]);
  // Edits of the list as it was read: a fresh answer (after a save, or someone else's change)
  // starts over from it.
  const [edits, setEdits] = useState<{ from: unknown; ids: string[] } | null>(null);
  const checked = edits !== null && edits.from === allowed.data ? edits.ids : null;
  const setChecked = (ids: string[] | null) =>
    setEdits(ids === null ? null : { from: allowed.data, ids });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (allowed.isPending || (canManage && catalogue.isPending)) {
    return <Loading label="Loading models…" />;
  }
  if (allowed.isError) {
    return <ErrorNote error={allowed.error} retry={() => void allowed.refetch()} />;
  }
  if (canManage && catalogue.isError) {
    return <ErrorNote error={catalogue.error} retry={() => void catalogue.refetch()} />;
  }
  const models = canManage ? (catalogue.data?.items ?? []) : allowed.data.items;
  const defaultModel = catalogue.data?.defaultModel;
  const selected = checked ?? saved;
  const dirty =
    checked !== null &&
    (checked.length !== saved.length || checked.some((m) => !saved.includes(m)));

  const toggle = (modelId: string, on: boolean) => {
    setError(null);
    const next = on ? [...selected, modelId] : selected.filter((m) => m !== modelId);
    // In the catalogue's order, so the list the chat shows does not depend on clicking order.
    setChecked(models.map((m) => m.id).filter((m) => next.includes(m)));
  };

  async function save(models: string[] | null) {
    setBusy(true);
    setError(null);
    try {
      const updated = await assistantsApi.setAllowedModels(orgId, models);
      queryClient.setQueryData(keys.allowedModels(orgId), updated);
      toast.success(
        models === null ? "Back to the platform's default model." : "Allowed models saved.",
      );
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  const box = (model: CatalogueModel) =>
    canManage ? (
      <input
        type="checkbox"
        id={`${id}-${model.id}`}
        className="size-4 shrink-0 accent-primary"
        checked={selected.includes(model.id)}
        disabled={busy}
        aria-describedby={`${id}-${model.id}-detail`}
        onChange={(event) => toggle(model.id, event.target.checked)}
      />
    ) : null;
  const name = (model: CatalogueModel) => (
    <span className="grid min-w-0 gap-0.5">
      {canManage ? (
        <label htmlFor={`${id}-${model.id}`} className="font-medium">
          {model.displayName}
        </label>
      ) : (
        <span className="font-medium">{model.displayName}</span>
      )}
      <span className="break-all font-mono text-muted-foreground text-xs">{model.id}</span>
    </span>
  );

  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title={canManage ? "Allowed models" : "Models you can use"}
        description={
          canManage
            ? "The models your members may pick in a chat and your profiles may run. Prices are what your organization is charged per million tokens."
            : "Pick one in a chat's model menu. Prices are what your organization is charged per million tokens. Owners and admins choose this list."
        }
      />
      <CardBody className="grid gap-4">
        {wide ? (
          <Table>
            <caption className="sr-only">Models and their prices per million tokens</caption>
            <THead>
              <Tr>
                <Th scope="col">Model</Th>
                <Th scope="col" className={num}>
                  Input / 1M
                </Th>
                <Th scope="col" className={num}>
                  Output / 1M
                </Th>
                <Th scope="col" className={num}>
                  Cache read / write
                </Th>
                <Th scope="col" className={num}>
                  Context
                </Th>
                <Th scope="col">Can use</Th>
              </Tr>
            </THead>
            <TBody>
              {models.map((model) => (
                <Tr key={model.id} id={`${id}-${model.id}-detail`}>
                  <Td>
                    <div className="flex items-start gap-3">
                      {box(model) ? <span className="pt-0.5">{box(model)}</span> : null}
                      {name(model)}
                      <span className="ml-auto flex flex-wrap justify-end gap-1">
                        <ModelBadges model={model} defaultModel={defaultModel} />
                      </span>
                    </div>
                  </Td>
                  <Td className={num}>{perMTok(model.prices.promptMicrosPerMTok)}</Td>
                  <Td className={num}>{perMTok(model.prices.completionMicrosPerMTok)}</Td>
                  <Td className={cn(num, "whitespace-nowrap")}>{cacheWords(model)}</Td>
                  <Td className={num}>
                    <span
                      title={`${tokensExact(model.contextWindow)} tokens of context, up to ${tokensExact(model.maxOutputTokens)} out`}
                    >
                      {tokensShort(model.contextWindow)}
                    </span>
                  </Td>
                  <Td className="whitespace-nowrap">{capabilityWords(model)}</Td>
                </Tr>
              ))}
            </TBody>
          </Table>
        ) : (
          <ul aria-label="Models" className="grid gap-2">
            {models.map((model) => (
              <li key={model.id} className="grid gap-2 rounded-md border border-border p-3 text-sm">
                <div className="flex items-start gap-3">
                  {box(model) ? <span className="pt-0.5">{box(model)}</span> : null}
                  {name(model)}
                </div>
                <div className="flex flex-wrap gap-1">
                  <ModelBadges model={model} defaultModel={defaultModel} />
                </div>
                <dl
                  id={`${id}-${model.id}-detail`}
                  className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-4 gap-y-1"
                >
                  {[
                    ...figures(model).map((f) => ({ ...f, label: `${f.label} / 1M` })),
                    { label: "Context", value: `${tokensShort(model.contextWindow)} tokens` },
                    { label: "Can use", value: capabilityWords(model) },
                  ].map((figure) => (
                    <div key={figure.label} className="contents">
                      <dt className="text-muted-foreground">{figure.label}</dt>
                      <dd className="text-right tabular-nums">{figure.value}</dd>
                    </div>
                  ))}
                </dl>
              </li>
            ))}
          </ul>
        )}
        {canManage ? (
          // Held at the bottom of the screen while there are changes to save (a phone's list of
          // models is long); at rest, the card's last row.
          <div
            className={
              dirty
                ? "sticky bottom-0 z-10 -mx-5 grid gap-3 border-border border-t bg-card/95 px-5 py-3 backdrop-blur"
                : "grid gap-3"
            }
          >
            {error ? (
              // Every problem of the refusal (the list is the one control), models by name.
              <ProblemNote sentences={modelRefusalSentences(error, models)} />
            ) : null}
            <div className="flex flex-wrap items-center gap-2">
              <Button
                variant="primary"
                disabled={busy || !dirty || selected.length === 0}
                onClick={() => void save(selected)}
              >
                {busy ? "Saving…" : "Save allowed models"}
              </Button>
              {dirty ? (
                <Button variant="ghost" disabled={busy} onClick={() => setChecked(null)}>
                  Discard changes
                </Button>
              ) : null}
              {allowed.data.chosen ? (
                <Button variant="ghost" disabled={busy} onClick={() => void save(null)}>
                  Use the platform default
                </Button>
              ) : null}
              <p className="text-muted-foreground text-sm" aria-live="polite">
                {selected.length === 0
                  ? "Allow at least one model."
                  : `${selected.length} of ${models.length} allowed${allowed.data.chosen ? "" : " (the platform default)"}`}
              </p>
            </div>
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}

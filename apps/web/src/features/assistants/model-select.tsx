import type { CatalogueModel } from "@parley/shared";
import { SelectMenuItem } from "../../components/ui/select-menu.tsx";
import { inOut, tokensShort } from "./model-words.ts";

/** The line under a model's name: what it costs per million tokens in and out, its context. */
export const modelDetail = (model: CatalogueModel): string =>
  `${inOut(model)} per 1M tokens · ${tokensShort(model.contextWindow)} context`;

/**
 * The options of a model select: each model by its display name with its prices per million
 * tokens (what the org is charged) and its context window.
 */
export function ModelItems({ models }: { models: readonly CatalogueModel[] }) {
  return models.map((model) => (
    <SelectMenuItem key={model.id} value={model.id} detail={modelDetail(model)}>
      {model.displayName}
    </SelectMenuItem>
  ));
}

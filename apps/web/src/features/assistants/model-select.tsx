import type { CatalogueModel } from "@parley/shared";
import type { ReactNode } from "react";
import { SelectMenuItem } from "../../components/ui/select-menu.tsx";
import { inOut, tokensShort } from "./model-words.ts";

/**
 * The line under a model's name: what it costs per million tokens in and out, its context, and
 * whether the local dev model answers for it (`servedLocally`). Each
 * phrase keeps together, so a narrow list breaks the line between them, never inside a price.
 */
export function modelDetail(model: CatalogueModel, lead?: string): ReactNode {
  const parts = [
    ...(lead ? [lead] : []),
    `${inOut(model)} per 1M tokens`,
    `${tokensShort(model.contextWindow)} context`,
    // Offline, a name such as "GPT-4o mini" must not pass for the real model.
    ...(model.servedLocally ? ["answered by the local dev model"] : []),
  ];
  return (
    <span className="flex flex-wrap gap-x-1">
      {parts.map((part, index) => (
        <span key={part} className="whitespace-nowrap">
          {part}
          {index < parts.length - 1 ? " · " : ""}
        </span>
      ))}
    </span>
  );
}

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

import { type CatalogueModel, TEMPERATURE_RANGE, TOP_P_RANGE } from "@parley/shared";
import { formatMicros } from "../../lib/money.ts";
import { asSentence, problemsOf, refusalOf } from "../../lib/refusal.ts";

/**
 * How a model reads to a person: its price per million tokens in dollars (exact: the catalogue's
 * figures are integer micro-dollars per million tokens, so "$0.18" and "$0.000001" are both
 * exactly what the org is charged per million), its context window, what it can do.
 */

/** Dollars per million tokens, every digit the catalogue has (`$3.60`, `$0.03`, `$0.000125`). */
export const perMTok = (micros: number): string => formatMicros(micros, { precise: true });

/** "$0.18 in · $0.72 out": input and output per million tokens, the figures people compare. */
export const inOut = (model: Pick<CatalogueModel, "prices">): string =>
  `${perMTok(model.prices.promptMicrosPerMTok)} in · ${perMTok(model.prices.completionMicrosPerMTok)} out`;

/**
 * What a model served on the platform's own machine is (`servedLocally`: under `pnpm dev` offline,
 * the dev model answers every model without an endpoint of its own, whatever its name).
 */
export const LOCAL_MODEL_NOTE =
  "This platform runs offline: the local dev model answers in this model's place, at its prices.";

const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

/** "128K", "1M": a token count at a glance (the exact figure goes in a title). */
export const tokensShort = (tokens: number): string => compact.format(tokens);

export const tokensExact = (tokens: number): string => tokens.toLocaleString("en-US");

/** "Tools, reasoning", "Tools", or "Text only". */
export function capabilityWords(model: Pick<CatalogueModel, "capabilities">): string {
  const words = [
    model.capabilities.tools ? "tools" : null,
    model.capabilities.reasoning ? "reasoning" : null,
  ].filter((word) => word !== null);
  if (words.length === 0) return "Text only";
  const text = words.join(", ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The sampling range a model takes: its own, or the widest a profile may ask for. */
export const temperatureRange = (model: Pick<CatalogueModel, "temperature"> | undefined) =>
  model?.temperature ?? TEMPERATURE_RANGE;
export const topPRange = (model: Pick<CatalogueModel, "topP"> | undefined) =>
  model?.topP ?? TOP_P_RANGE;

/**
 * A display name without its provider ("OpenAI: GPT-4o-mini" → "GPT-4o-mini"), for a narrow
 * place (the chat's header on a phone); the full name goes beside it for screen readers.
 */
export const shortName = (name: string): string => {
  const at = name.indexOf(": ");
  return at > 0 && at < name.length - 2 ? name.slice(at + 2) : name;
};

/** A model's display name from a list, or its id when the list does not have it. */
export const modelName = (models: readonly CatalogueModel[] | undefined, id: string): string =>
  models?.find((model) => model.id === id)?.displayName ?? id;

/**
 * An API refusal as a person reads it: without the field path it starts with ("model: …", the
 * form already shows where) and with models named by their display names, not their ids.
 */
export function refusalWords(message: string, models: readonly CatalogueModel[] = []): string {
  let text = message.replace(/^[a-zA-Z]+(\.\d+)?: /, "");
  // Whole ids only, longest first: "parley/dev" must not eat the start of "parley/dev-large".
  const ids = [...new Set(models.map((model) => model.id))].sort((a, b) => b.length - a.length);
  if (ids.length > 0) {
    const escaped = ids.map((id) => id.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"));
    const pattern = new RegExp(
      `(?<![A-Za-z0-9._:/-])(?:${escaped.join("|")})(?![A-Za-z0-9_/-]|[.:][A-Za-z0-9])`,
      "g",
    );
    text = text.replace(pattern, (id) => modelName(models, id));
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Every problem of a refusal as sentences, models named by their names (`refusalWords`). */
export const modelRefusalSentences = (
  error: unknown,
  models: readonly CatalogueModel[] = [],
): string[] =>
  problemsOf(refusalOf(error)).map((problem) => asSentence(refusalWords(problem.message, models)));

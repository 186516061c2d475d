import {
  type AssistantProfile,
  type CatalogueModel,
  createProfileSchema,
  MAX_INSTRUCTIONS_BYTES,
  MAX_SUGGESTIONS,
  type UpdateProfile,
  utf8Bytes,
} from "@parley/shared";
import { temperatureRange, tokensExact, topPRange } from "./model-words.ts";

/**
 * The profile editor's state and its checks. Numbers are kept as typed (an empty box is "the
 * model's default"), and the checks are the API's own: the shared schema (instructions'
 * characters and 16 KB, names, the welcome's and suggestions' text) and the model's ranges from
 * the catalogue, so what the editor accepts is what the API accepts, and it says why in the same
 * words before anything is sent.
 */
export interface ProfileDraft {
  name: string;
  instructions: string;
  model: string;
  temperature: string;
  topP: string;
  maxOutputTokens: string;
  welcome: string;
  suggestions: string[];
  tools: string[];
  /** Search the project's documents with the person's message before the first model call. */
  knowledgeRetrieval: boolean;
}

export type ProfileContent = Pick<
  AssistantProfile,
  | "name"
  | "instructions"
  | "model"
  | "temperature"
  | "topP"
  | "maxOutputTokens"
  | "welcome"
  | "suggestions"
  | "tools"
  | "knowledgeRetrieval"
>;

/** A field the editor can name an error on (`suggestions.2` for the third suggestion). */
export type DraftField =
  | keyof Omit<ProfileDraft, "suggestions">
  | "suggestions"
  | `suggestions.${number}`;

export type DraftErrors = Partial<Record<DraftField, string>>;

const numberText = (value: number | null) => (value === null ? "" : String(value));

export function draftOf(profile: ProfileContent): ProfileDraft {
  return {
    name: profile.name,
    instructions: profile.instructions,
    model: profile.model,
    temperature: numberText(profile.temperature),
    topP: numberText(profile.topP),
    maxOutputTokens: numberText(profile.maxOutputTokens),
    welcome: profile.welcome ?? "",
    suggestions: [...profile.suggestions],
    tools: [...profile.tools],
    knowledgeRetrieval: profile.knowledgeRetrieval,
  };
}

/** The instructions' size as the API counts it: UTF-8 bytes after NFC and trimming the end. */
export const instructionBytes = (text: string): number =>
  utf8Bytes(text.normalize("NFC").trimEnd());

/** "Must not …": a schema message as a sentence. */
const sentence = (message: string) => message.charAt(0).toUpperCase() + message.slice(1);

/** A schema issue in words a person acts on (zod's own length messages read like a type error). */
function issueWords(issue: {
  code: string;
  message: string;
  path: PropertyKey[];
  origin?: unknown;
  maximum?: unknown;
}): string {
  if (issue.code === "too_small" && issue.origin === "string") {
    return issue.path[0] === "name" ? "Give the profile a name" : "Must not be empty";
  }
  if (issue.code === "too_big" && issue.origin === "string") {
    return `At most ${String(issue.maximum)} characters`;
  }
  return sentence(issue.message);
}

function decimal(
  text: string,
  range: { min: number; max: number },
  what: string,
): { value: number | null; error?: string } {
  if (text.trim() === "") return { value: null };
  const value = Number(text);
  if (!Number.isFinite(value)) return { value: null, error: "Enter a number, or leave it empty" };
  if (value < range.min || value > range.max) {
    return { value, error: `Must be between ${range.min} and ${range.max} for ${what}` };
  }
  return { value };
}

/**
 * Checks a draft against the API's rules and the chosen model's ranges; returns the content to
 * send, or the errors by field. `model` is the chosen model's catalogue entry (undefined when the
 * org does not allow it: then that is the error).
 */
export function checkDraft(
  draft: ProfileDraft,
  model: CatalogueModel | undefined,
): { ok: true; content: ProfileContent } | { ok: false; errors: DraftErrors } {
  const errors: DraftErrors = {};
  const what = model?.displayName ?? "this model";
  const temperature = decimal(draft.temperature, temperatureRange(model), what);
  if (temperature.error) errors.temperature = temperature.error;
  const topP = decimal(draft.topP, topPRange(model), what);
  if (topP.error) errors.topP = topP.error;
  let maxOutputTokens: number | null = null;
  if (draft.maxOutputTokens.trim() !== "") {
    const value = Number(draft.maxOutputTokens);
    const max = model?.maxOutputTokens ?? 10_000_000;
    if (!Number.isInteger(value) || value < 1)
      errors.maxOutputTokens = "Enter a whole number of tokens, or leave it empty";
    else if (value > max) errors.maxOutputTokens = `At most ${tokensExact(max)} for ${what}`;
    else maxOutputTokens = value;
  }
  if (!model) errors.model = "Choose a model your organization allows";
  const content: ProfileContent = {
    name: draft.name,
    instructions: draft.instructions,
    model: draft.model,
    temperature: temperature.value,
    topP: topP.value,
    maxOutputTokens,
    welcome: draft.welcome.trim() === "" ? null : draft.welcome,
    // An empty box is no suggestion, not an error.
    suggestions: draft.suggestions.filter((text) => text.trim() !== ""),
    tools: draft.tools,
    knowledgeRetrieval: draft.knowledgeRetrieval,
  };
  if (draft.suggestions.length > MAX_SUGGESTIONS) {
    errors.suggestions = `At most ${MAX_SUGGESTIONS} suggested prompts`;
  }
  const parsed = createProfileSchema.safeParse(content);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [field, index] = issue.path;
      if (field === "suggestions" && typeof index === "number") {
        // Back to the box the person typed in (empty boxes were left out above).
        const box = nthFilled(draft.suggestions, index);
        errors[`suggestions.${box}`] ??= issueWords(issue);
      } else if (typeof field === "string" && !(field in errors)) {
        errors[field as DraftField] = issueWords(issue);
      }
    }
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    content: parsed.success ? ({ ...content, ...parsed.data } as ProfileContent) : content,
  };
}

/** The index among all boxes of the `n`th box that is not empty. */
function nthFilled(boxes: readonly string[], n: number): number {
  let seen = -1;
  for (let index = 0; index < boxes.length; index++) {
    if ((boxes[index] ?? "").trim() !== "") seen++;
    if (seen === n) return index;
  }
  return n;
}

/** What differs from the saved profile: the PATCH sends only that (and the version it edits). */
export function changesOf(saved: ProfileContent, content: ProfileContent): Partial<UpdateProfile> {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(content) as (keyof ProfileContent)[]) {
    if (JSON.stringify(saved[key]) !== JSON.stringify(content[key])) changes[key] = content[key];
  }
  return changes as Partial<UpdateProfile>;
}

/** Whether the draft differs from the saved profile (as typed: "0.70" and "0.7" differ). */
export const isDirty = (saved: ProfileContent, draft: ProfileDraft): boolean =>
  JSON.stringify(draftOf(saved)) !== JSON.stringify(draft);

export { MAX_INSTRUCTIONS_BYTES, MAX_SUGGESTIONS };

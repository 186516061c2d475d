import type { CatalogueModel } from "@parley/shared";
import { Link } from "@tanstack/react-router";
import { useId } from "react";
import { Input } from "../../components/ui/input.tsx";
import {
  SelectMenu,
  SelectMenuContent,
  SelectMenuItem,
  SelectMenuTrigger,
  SelectMenuValue,
} from "../../components/ui/select-menu.tsx";
import { ModelItems } from "./model-select.tsx";
import {
  capabilityWords,
  inOut,
  modelName,
  temperatureRange,
  tokensExact,
  tokensShort,
  topPRange,
} from "./model-words.ts";
import type { ProfileDraft } from "./profile-draft.ts";

type Numbers = Pick<ProfileDraft, "temperature" | "topP" | "maxOutputTokens">;

/** A number box with its range under it (from the model), and the error when there is one. */
function NumberField({
  label,
  value,
  onChange,
  hint,
  error,
  step,
  min,
  max,
  readOnly,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint: string;
  error?: string;
  step: string;
  min: number;
  max: number;
  readOnly?: boolean;
}) {
  const id = useId();
  return (
    <div className="grid content-start gap-1.5">
      <label htmlFor={id} className="font-medium text-sm">
        {label}
      </label>
      <Input
        id={id}
        type="number"
        inputMode="decimal"
        step={step}
        min={min}
        max={max}
        placeholder="Default"
        readOnly={readOnly}
        value={value}
        aria-invalid={error !== undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
        onChange={(event) => onChange(event.target.value)}
        className="tabular-nums"
      />
      <span id={`${id}-hint`} className="text-muted-foreground text-xs">
        {hint}
      </span>
      {error ? (
        <span id={`${id}-error`} role="alert" className="text-destructive text-sm">
          {error}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The profile's model, from the models the org allows (each with its price per million tokens),
 * and its sampling: temperature, top-p and the longest reply, each within what the chosen model
 * takes (the API's ranges). Empty boxes leave the choice to the model or to Parley.
 */
export function ModelFields({
  models,
  names,
  value,
  onModel,
  numbers,
  onNumbers,
  errors,
  readOnly,
}: {
  /** The org's allowed models. */
  models: readonly CatalogueModel[];
  /** Every model known (for the name of one the org no longer allows). */
  names: readonly CatalogueModel[];
  value: string;
  onModel: (model: string) => void;
  numbers: Numbers;
  onNumbers: (numbers: Numbers) => void;
  errors: Partial<Record<"model" | keyof Numbers, string>>;
  readOnly?: boolean;
}) {
  const id = useId();
  const model = models.find((candidate) => candidate.id === value);
  const temperature = temperatureRange(model);
  const topP = topPRange(model);
  const maxOut = model?.maxOutputTokens;
  return (
    <div className="grid gap-5">
      <div className="grid gap-1.5">
        <span id={`${id}-label`} className="font-medium text-sm">
          Model
        </span>
        <SelectMenu value={value} onValueChange={onModel} disabled={readOnly}>
          <SelectMenuTrigger
            aria-labelledby={`${id}-label`}
            aria-describedby={`${id}-facts${errors.model ? ` ${id}-error` : ""}`}
            aria-invalid={errors.model !== undefined}
          >
            <SelectMenuValue>{modelName(names, value)}</SelectMenuValue>
          </SelectMenuTrigger>
          <SelectMenuContent>
            {model ? null : (
              <SelectMenuItem value={value} disabled detail="Not allowed in your organization">
                {modelName(names, value)}
              </SelectMenuItem>
            )}
            <ModelItems models={models} />
          </SelectMenuContent>
        </SelectMenu>
        <p id={`${id}-facts`} className="text-muted-foreground text-xs">
          {model
            ? `${inOut(model)} per 1M tokens · ${tokensShort(model.contextWindow)} context · ${capabilityWords(model)}`
            : "Choose one of the models your organization allows."}
        </p>
        {readOnly ? null : (
          <p className="text-muted-foreground text-xs">
            Only the models your organization allows are listed.{" "}
            <Link to="/assistants" hash="models" className="prose-link underline">
              Allow more under Assistants → Models
            </Link>
            .
          </p>
        )}
        {errors.model ? (
          <p id={`${id}-error`} role="alert" className="text-destructive text-sm">
            {errors.model}
          </p>
        ) : null}
      </div>
      <div className="grid gap-4 sm:grid-cols-3">
        <NumberField
          label="Temperature"
          value={numbers.temperature}
          onChange={(next) => onNumbers({ ...numbers, temperature: next })}
          hint={`${temperature.min} to ${temperature.max}; lower is steadier`}
          error={errors.temperature}
          step="0.1"
          min={temperature.min}
          max={temperature.max}
          readOnly={readOnly}
        />
        <NumberField
          label="Top-p"
          value={numbers.topP}
          onChange={(next) => onNumbers({ ...numbers, topP: next })}
          hint={`${topP.min} to ${topP.max}`}
          error={errors.topP}
          step="0.05"
          min={topP.min}
          max={topP.max}
          readOnly={readOnly}
        />
        <NumberField
          label="Max output tokens"
          value={numbers.maxOutputTokens}
          onChange={(next) => onNumbers({ ...numbers, maxOutputTokens: next })}
          hint={
            maxOut
              ? `1 to ${tokensExact(maxOut)}; empty: Parley's default`
              : "Empty: Parley's default"
          }
          error={errors.maxOutputTokens}
          step="1"
          min={1}
          max={maxOut ?? 10_000_000}
          readOnly={readOnly}
        />
      </div>
    </div>
  );
}

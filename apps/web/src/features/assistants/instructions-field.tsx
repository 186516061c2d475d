import { instructionsProblem } from "@parley/shared";
import { useId } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Textarea } from "../../components/ui/input.tsx";
import { cn } from "../../lib/cn.ts";
import { instructionBytes, MAX_INSTRUCTIONS_BYTES } from "./profile-draft.ts";

/**
 * Characters the API refuses in instructions (instructionsProblem in @parley/shared): controls
 * but tab and line feed, line and paragraph separators, bidi embeddings and isolates, U+FFFD and
 * unpaired surrogates. Carriage returns become line feeds, separators line feeds, the rest goes.
 */
export function cleanInstructions(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[\u2028\u2029]/g, "\n")
    .replace(/(?![\t\n])[\p{Cc}\u202A-\u202E\u2066-\u2069\uFFFD]|\p{Cs}/gu, "");
}

const grouped = (value: number) => value.toLocaleString("en-US");

/**
 * The tenant's system prompt: a textarea with its size against the 16 KB limit as it is typed
 * (UTF-8 bytes after normalization, as the API counts them), and the API's reasons for refusing
 * text said at once (a control character pasted from a PDF, a bidi override), with a button that
 * removes what is refused. `error` is a refusal the API gave for this field.
 */
export function InstructionsField({
  value,
  onChange,
  error,
  readOnly,
}: {
  value: string;
  onChange: (value: string) => void;
  error?: string;
  readOnly?: boolean;
}) {
  const id = useId();
  const bytes = instructionBytes(value);
  const over = bytes > MAX_INSTRUCTIONS_BYTES;
  const problem = instructionsProblem(value);
  const message = problem
    ? `Instructions ${problem}.`
    : over
      ? `Instructions are ${grouped(bytes - MAX_INSTRUCTIONS_BYTES)} bytes over the 16 KB limit.`
      : error;
  const share = Math.min(1, bytes / MAX_INSTRUCTIONS_BYTES);
  return (
    <div className="grid gap-1.5">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <label htmlFor={id} className="font-medium text-sm">
          Instructions
        </label>
        <span
          id={`${id}-size`}
          className={cn(
            "text-xs tabular-nums",
            over ? "font-medium text-destructive" : "text-muted-foreground",
          )}
        >
          {grouped(bytes)} / {grouped(MAX_INSTRUCTIONS_BYTES)} bytes
        </span>
      </div>
      <Textarea
        id={id}
        rows={10}
        spellCheck
        readOnly={readOnly}
        // Grows with the text (up to most of the screen), so a long prompt reads without a
        // second scrollbar; short ones keep room to write.
        className="field-sizing-content max-h-[70vh] min-h-48 resize-y font-mono text-[13px] leading-relaxed"
        placeholder={
          "You are the support assistant of Acme Notes.\nAnswer in a warm, brief voice. Point to the help center for billing questions."
        }
        value={value}
        aria-invalid={message !== undefined}
        aria-describedby={`${id}-hint ${id}-size${message ? ` ${id}-error` : ""}`}
        onChange={(event) => onChange(event.target.value)}
      />
      <div aria-hidden="true" className="h-1 overflow-hidden rounded-full bg-muted">
        <div
          className={cn(
            "h-full rounded-full transition-[width]",
            over ? "bg-destructive" : share > 0.9 ? "bg-warning" : "bg-primary/60",
          )}
          style={{ width: `${share * 100}%` }}
        />
      </div>
      <p id={`${id}-hint`} className="text-muted-foreground text-xs">
        Your assistant's voice, focus and rules. Parley keeps its own safety rules around them and
        frames project memory as data: “The whole prompt” shows how they sit together.
      </p>
      {message ? (
        <div
          id={`${id}-error`}
          role="alert"
          className="flex flex-wrap items-center gap-2 text-destructive text-sm"
        >
          <span>{message}</span>
          {problem && !readOnly ? (
            <Button size="sm" onClick={() => onChange(cleanInstructions(value))}>
              Remove these characters
            </Button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

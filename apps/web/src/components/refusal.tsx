import { type ComponentProps, useCallback, useEffect, useRef, useState } from "react";
import {
  asSentence,
  problemSentence,
  problemsBeside,
  type Refusal,
  refusalAt,
  refusalOf,
} from "../lib/refusal.ts";
import { Field } from "./ui/input.tsx";
import { ProblemNote } from "./ui/states.tsx";

/**
 * How a form shows a refusal (lib/refusal.ts has the logic): each problem under the control that
 * holds its field (`FieldMessage`, wired to the control by `fieldProps`), the rest in the form's
 * one alert (`RefusalNote`), and the first marked control focused, so it is in view and a screen
 * reader reads its label and its problem. Used by every form that submits to the API.
 */

/**
 * The control's `aria-invalid`, and its `aria-describedby` naming the problem (`message`) before
 * the control's own hints (`hints`: ids, kept when there is no problem).
 */
export function fieldProps(id: string, message: string | null, ...hints: string[]) {
  const described = [message ? `${id}-problem` : null, ...hints].filter(Boolean).join(" ");
  return {
    "aria-invalid": message ? (true as const) : undefined,
    "aria-describedby": described === "" ? undefined : described,
  };
}

/** Why the control's value is refused, under it, as a sentence (`prefix` names part of it). */
export function FieldMessage({
  id,
  message,
  prefix,
}: {
  id: string;
  message: string | null;
  prefix?: string | undefined;
}) {
  if (!message) return null;
  return (
    <p id={`${id}-problem`} className="text-destructive text-xs">
      {asSentence(prefix ? `${prefix}${message}` : message)}
    </p>
  );
}

/**
 * A labelled control (`Field`) with its problem under it, outside the label: the label names the
 * control, the problem describes it (give the control `fieldProps(id, message)`).
 */
export function ProblemField({
  id,
  message,
  ...field
}: ComponentProps<typeof Field> & { id: string; message: string | null }) {
  return (
    <div className="grid gap-1.5">
      <Field {...field} />
      <FieldMessage id={id} message={message} />
    </div>
  );
}

/**
 * The form's alert: the problems no control of the form shows (`fields`: the API's fields the
 * form has a control for; a problem inside one, `allowedOrigins.1`, is that control's), each a
 * sentence that names its field (`words`, else the API's name in words).
 */
export function RefusalNote({
  refusal,
  fields = [],
  words,
}: {
  refusal: Refusal | null;
  fields?: readonly string[];
  words?: (field: string) => string;
}) {
  const sentences = problemsBeside(refusal, fields).map((problem) =>
    problemSentence(problem, words),
  );
  return <ProblemNote sentences={sentences} />;
}

/** The first control a refusal marks, or the first control inside a marked group. */
function firstMarked(form: HTMLFormElement): HTMLElement | null {
  const marked = form.querySelector<HTMLElement>('[aria-invalid="true"]');
  if (!marked || marked.matches("input, select, textarea, button")) return marked;
  return marked.querySelector<HTMLElement>("input, select, textarea, button");
}

/**
 * A form's refusal: `refuse(error)` takes what the API threw (or `refuseWith` a refusal of the
 * form's own check), `at(field)` is the problem at a field (for `fieldProps`/`FieldMessage`),
 * and `form` goes on the `<form>`: each new refusal focuses the first control it marks.
 */
export function useRefusal() {
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (refusal && form.current) firstMarked(form.current)?.focus();
  }, [refusal]);
  const refuse = useCallback((error: unknown) => setRefusal(refusalOf(error)), []);
  const clear = useCallback(() => setRefusal(null), []);
  return {
    refusal,
    refuse,
    refuseWith: setRefusal,
    clear,
    form,
    at: (field: string) => refusalAt(refusal, field),
  };
}

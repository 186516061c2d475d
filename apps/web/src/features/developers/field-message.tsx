/** The control's `aria-invalid` and `aria-describedby` when a refusal names it. */
export const fieldProps = (id: string, message: string | null) =>
  message
    ? { "aria-invalid": true as const, "aria-describedby": `${id}-problem` }
    : { "aria-invalid": undefined };

/** Why the API refuses this control's value, under it (`prefix` names a part of the value). */
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
      {prefix ? `${prefix}${message}` : capitalize(message)}
    </p>
  );
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

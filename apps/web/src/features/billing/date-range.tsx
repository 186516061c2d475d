import { Field, Input } from "../../components/ui/input.tsx";

/**
 * "From" and "To" date fields (UTC days, both inclusive as the person reads them), each bounded
 * by the other so the range cannot be inverted.
 */
export function DateRangeFields({
  from,
  to,
  onFrom,
  onTo,
}: {
  from: string;
  to: string;
  onFrom: (value: string) => void;
  onTo: (value: string) => void;
}) {
  return (
    <>
      <Field label="From">
        <Input
          type="date"
          value={from}
          max={to || undefined}
          onChange={(event) => onFrom(event.target.value)}
        />
      </Field>
      <Field label="To">
        <Input
          type="date"
          value={to}
          min={from || undefined}
          onChange={(event) => onTo(event.target.value)}
        />
      </Field>
    </>
  );
}

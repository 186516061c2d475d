import type { ErasureRequestInput } from "@parley/shared";
import { type FormEvent, useState } from "react";
import { FormError } from "../../components/field-error.tsx";
import { api, type ErasureRequest } from "../../lib/api.ts";

export type SubjectType = ErasureRequestInput["subject"]["type"];

const SUBJECT_TYPES: { value: SubjectType; label: string }[] = [
  { value: "member", label: "Member (user id)" },
  { value: "project", label: "Project (project id)" },
  { value: "session", label: "Session (session id)" },
];

export type ErasureValidation =
  | { ok: true; input: ErasureRequestInput }
  | { ok: false; field: "type" | "id" | "reason"; message: string };

/** The same limits as the server's `erasureRequestSchema`, checked before anything is sent. */
export function validateErasure(values: {
  type: string;
  id: string;
  reason: string;
}): ErasureValidation {
  const type = SUBJECT_TYPES.find((candidate) => candidate.value === values.type)?.value;
  if (!type) return { ok: false, field: "type", message: "Choose what to erase" };
  const id = values.id.trim();
  if (id === "") return { ok: false, field: "id", message: "Enter the id of what to erase" };
  if (id.length > 100)
    return { ok: false, field: "id", message: "An id is at most 100 characters" };
  const reason = values.reason.trim();
  if (reason.length > 500) {
    return { ok: false, field: "reason", message: "The reason is at most 500 characters" };
  }
  return { ok: true, input: { subject: { type, id }, ...(reason ? { reason } : {}) } };
}

/** Files an erasure request (GDPR Art. 17). The subject id is hashed on the server. */
export function ErasureForm({
  orgId,
  onFiled,
}: {
  orgId: string;
  onFiled: (request: ErasureRequest) => void;
}) {
  const [invalid, setInvalid] = useState<{ field: string; message: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const result = validateErasure({
      type: String(data.get("type") ?? ""),
      id: String(data.get("id") ?? ""),
      reason: String(data.get("reason") ?? ""),
    });
    setError(null);
    if (!result.ok) {
      setInvalid({ field: result.field, message: result.message });
      return;
    }
    setInvalid(null);
    setBusy(true);
    try {
      onFiled(await api.fileErasure(orgId, result.input));
      form.reset();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  const fieldProps = (field: string) =>
    invalid?.field === field
      ? { "aria-invalid": true, "aria-describedby": `erasure-${field}-error` }
      : {};
  const fieldError = (field: string) =>
    invalid?.field === field ? (
      <span id={`erasure-${field}-error`} role="alert" className="error">
        {invalid.message}
      </span>
    ) : null;

  return (
    <form onSubmit={onSubmit} className="card stack" aria-labelledby="erasure-title" noValidate>
      <h2 id="erasure-title">File an erasure request</h2>
      <p className="muted">
        Erases the subject's content from every store, then verifies nothing is left. It cannot be
        undone.
      </p>
      <label>
        <span>What to erase</span>
        <select name="type" defaultValue="session" {...fieldProps("type")}>
          {SUBJECT_TYPES.map((type) => (
            <option key={type.value} value={type.value}>
              {type.label}
            </option>
          ))}
        </select>
      </label>
      {fieldError("type")}
      <label>
        <span>Id</span>
        <input name="id" autoComplete="off" maxLength={100} {...fieldProps("id")} />
      </label>
      {fieldError("id")}
      <label>
        <span>Reason (optional)</span>
        <textarea name="reason" rows={2} maxLength={500} {...fieldProps("reason")} />
      </label>
      {fieldError("reason")}
      <FormError error={error} />
      <button type="submit" className="danger" disabled={busy}>
        {busy ? "Filing…" : "File erasure request"}
      </button>
    </form>
  );
}

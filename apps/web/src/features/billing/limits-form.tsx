import { type FormEvent, useState } from "react";
import { FormError } from "../../components/field-error.tsx";
import { api, type BillingSettings } from "../../lib/api.ts";
import { formFromSettings, type LimitsValues, limitsPatch } from "./limits.ts";

const LABELS: Record<keyof LimitsValues, string> = {
  orgMonthlyLimitMicros: "Monthly limit for the organization (USD)",
  memberDailyLimitMicros: "Daily limit per member (USD)",
  lowBalanceMicros: "Low-balance alert below (USD)",
  alertWebhookUrl: "Alert webhook URL",
};

/** Spend limits and alert settings (owners and admins). Empty removes a limit. */
export function LimitsForm({
  orgId,
  settings,
  onSaved,
}: {
  orgId: string;
  settings: BillingSettings;
  onSaved: (settings: BillingSettings) => void;
}) {
  const [form, setForm] = useState<LimitsValues>(() => formFromSettings(settings));
  const [invalid, setInvalid] = useState<{ field: keyof LimitsValues; message: string } | null>(
    null,
  );
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSaved(null);
    setError(null);
    const result = limitsPatch(form, settings);
    if (!result.ok) {
      setInvalid({ field: result.field, message: result.message });
      return;
    }
    setInvalid(null);
    if (Object.keys(result.patch).length === 0) {
      setSaved("Nothing changed.");
      return;
    }
    setBusy(true);
    try {
      const next = await api.updateBillingSettings(orgId, result.patch);
      setForm(formFromSettings(next));
      onSaved(next);
      setSaved("Settings saved.");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="card stack" aria-labelledby="limits-title" noValidate>
      <h2 id="limits-title">Limits and alerts</h2>
      <p className="muted">Leave a field empty to remove that limit.</p>
      {(Object.keys(LABELS) as (keyof LimitsValues)[]).map((field) => {
        const isInvalid = invalid?.field === field;
        return (
          <div key={field} className="stack field">
            <label>
              <span>{LABELS[field]}</span>
              <input
                name={field}
                value={form[field]}
                inputMode={field === "alertWebhookUrl" ? "url" : "decimal"}
                type={field === "alertWebhookUrl" ? "url" : "text"}
                placeholder={
                  field === "alertWebhookUrl" ? "https://example.com/hooks/parley" : "none"
                }
                aria-invalid={isInvalid}
                aria-describedby={isInvalid ? `${field}-error` : undefined}
                onChange={(event) => setForm({ ...form, [field]: event.target.value })}
              />
            </label>
            {isInvalid ? (
              <span id={`${field}-error`} role="alert" className="error">
                {invalid.message}
              </span>
            ) : null}
          </div>
        );
      })}
      <FormError error={error} />
      {saved ? (
        <p role="status" className="ok">
          {saved}
        </p>
      ) : null}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? "Saving…" : "Save settings"}
      </button>
    </form>
  );
}

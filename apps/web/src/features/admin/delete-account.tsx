import { useState } from "react";
import { FormError } from "../../components/field-error.tsx";
import { api } from "../../lib/api.ts";
import { navigate } from "../../lib/router.tsx";

/**
 * Deletes the signed-in user's account behind an explicit confirmation. The server refuses (409)
 * while the user is the only owner of an org with other members; its message says what to do.
 */
export function DeleteAccount({ email }: { email: string }) {
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function onDelete() {
    setBusy(true);
    setError(null);
    try {
      await api.deleteAccount();
      navigate("/signin", { replace: true });
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="account-title" className="card stack">
      <h2 id="account-title">Your account</h2>
      <p className="muted">
        Deleting your account erases your memberships, your sessions and every organization you
        belong to alone. It cannot be undone.
      </p>
      {confirming ? (
        <fieldset className="stack plain">
          <legend>
            <strong>Type your email, {email}, to confirm.</strong>
          </legend>
          <label>
            <span>Your email</span>
            <input
              value={typed}
              autoComplete="off"
              onChange={(event) => setTyped(event.target.value)}
            />
          </label>
          <FormError error={error} />
          <div className="actions">
            <button
              type="button"
              className="danger"
              disabled={busy || typed.trim().toLowerCase() !== email.toLowerCase()}
              onClick={() => void onDelete()}
            >
              {busy ? "Deleting…" : "Delete my account permanently"}
            </button>
            <button
              type="button"
              onClick={() => {
                setConfirming(false);
                setTyped("");
                setError(null);
              }}
            >
              Cancel
            </button>
          </div>
        </fieldset>
      ) : (
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Delete my account
        </button>
      )}
    </section>
  );
}

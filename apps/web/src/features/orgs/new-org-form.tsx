import { type FormEvent, useState } from "react";
import { FormError, fieldError } from "../../components/field-error.tsx";
import { api } from "../../lib/api.ts";
import { navigate } from "../../lib/router.tsx";
import { useSession } from "../../lib/session.tsx";

/**
 * Creates an organization with the signed-in user as its owner, then switches to it. Also the way
 * back in for someone who belongs to no organization any more.
 */
export function NewOrgForm() {
  const { reload, selectOrg } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      const org = await api.createOrg(name);
      selectOrg(org.id);
      await reload();
      navigate("/projects");
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  }

  const nameError = fieldError(error, "name");
  return (
    <form className="stack" aria-labelledby="new-org-title" onSubmit={onSubmit}>
      <h2 id="new-org-title">New organization</h2>
      <label>
        <span>Name</span>
        <input
          name="name"
          required
          maxLength={100}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? "new-org-error" : undefined}
        />
      </label>
      <div id="new-org-error">
        <FormError error={error} />
      </div>
      <button type="submit" disabled={busy}>
        {busy ? "Creating…" : "Create organization"}
      </button>
    </form>
  );
}

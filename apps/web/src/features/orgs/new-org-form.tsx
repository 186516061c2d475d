import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { fieldError } from "../../components/field-error.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Field, Input } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { orgsApi } from "../../lib/orgs-api.ts";
import { useSession } from "../../lib/session.tsx";

/**
 * Creates an organization with the signed-in user as its owner, then switches to it. Also the way
 * back in for someone who belongs to no organization any more.
 */
export function NewOrgForm() {
  const { reload, selectOrg } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      const org = await orgsApi.createOrg(name);
      selectOrg(org.id);
      await reload();
      await navigate({ to: "/projects" });
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  }

  const nameError = fieldError(error, "name");
  return (
    <form className="grid gap-4" aria-label="New organization" onSubmit={onSubmit}>
      <Field label="Name">
        <Input
          name="name"
          required
          maxLength={100}
          aria-invalid={nameError ? true : undefined}
          aria-describedby={nameError ? "new-org-error" : undefined}
        />
      </Field>
      <div id="new-org-error">
        <ErrorNote error={error} />
      </div>
      <div>
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Creating…" : "Create organization"}
        </Button>
      </div>
    </form>
  );
}

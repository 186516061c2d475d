import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId, useState } from "react";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Input } from "../../components/ui/input.tsx";
import { orgsApi } from "../../lib/orgs-api.ts";
import { useSession } from "../../lib/session.tsx";

/**
 * Creates an organization with the signed-in user as its owner, then switches to it. Also the way
 * back in for someone who belongs to no organization any more.
 */
export function NewOrgForm() {
  const { reload, selectOrg } = useSession();
  const navigate = useNavigate();
  const id = useId();
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    setBusy(true);
    clear();
    try {
      const org = await orgsApi.createOrg(name);
      selectOrg(org.id);
      await reload();
      await navigate({ to: "/projects" });
    } catch (caught) {
      refuse(caught);
      setBusy(false);
    }
  }

  return (
    <form ref={form} className="grid gap-4" aria-label="New organization" onSubmit={onSubmit}>
      <ProblemField label="Name" id={`${id}-name`} message={at("name")}>
        <Input name="name" required maxLength={100} {...fieldProps(`${id}-name`, at("name"))} />
      </ProblemField>
      <RefusalNote refusal={refusal} fields={["name"]} />
      <div>
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Creating…" : "Create organization"}
        </Button>
      </div>
    </form>
  );
}

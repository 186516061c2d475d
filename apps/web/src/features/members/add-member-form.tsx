import type { Invitation, Role } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { UserPlus } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Field, Input, Select } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { isApiError } from "../../lib/api.ts";
import { keys } from "../../lib/query.ts";
import { InvitationLink } from "./invitations.tsx";
import { rolesToGrant, roleWords } from "./member-rules.ts";
import { membersApi } from "./members-api.ts";

/**
 * Adds a person to the org by email, with the roles the caller may grant: an invitation is made and
 * its link shown to copy and send (Parley sends no mail); they join by opening it, with an account
 * of that email or a new one. Nobody joins unasked.
 */
export function AddMemberForm({
  orgId,
  orgName,
  actorRole,
}: {
  orgId: string;
  orgName: string;
  actorRole: Role;
}) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<Invitation | null>(null);
  const errorId = useId();
  const roles = rolesToGrant(actorRole);
  const emailRefused = isApiError(error) && error.field === "email";

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get("email") ?? "").trim();
    const role = String(data.get("role") ?? "member") as Role;
    setBusy(true);
    setError(null);
    setInvited(null);
    try {
      const invitation = await membersApi.invite(orgId, { email, role });
      form.reset();
      setInvited(invitation);
      toast.success(
        `Invitation for ${invitation.email} to join ${orgName} made: send them the link.`,
      );
      await queryClient.invalidateQueries({ queryKey: keys.invitations(orgId) });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="add-member-title" className="h-fit min-w-0">
      <CardHeader
        id="add-member-title"
        title="Add a member"
        description="They get an invitation link to send them, and join when they open it."
      />
      <CardBody>
        <form onSubmit={onSubmit} className="grid gap-4" aria-label="Add a member">
          <Field label="Email">
            <Input
              name="email"
              type="email"
              autoComplete="off"
              required
              maxLength={254}
              placeholder="ada@example.com"
              {...(emailRefused ? { "aria-invalid": true, "aria-describedby": errorId } : {})}
            />
          </Field>
          <Field label="Role">
            <Select name="role" defaultValue="member">
              {roles.map((role) => (
                <option key={role} value={role}>
                  {roleWords[role]}
                </option>
              ))}
            </Select>
          </Field>
          <div id={errorId}>
            <ErrorNote error={error} />
          </div>
          {invited?.url ? <InvitationLink invitation={invited} url={invited.url} /> : null}
          <Button type="submit" variant="primary" disabled={busy}>
            <UserPlus aria-hidden="true" />
            {busy ? "Adding…" : "Add member"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

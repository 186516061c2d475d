import type { Invitation, Role } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { UserPlus } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { toast } from "sonner";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Input, Select } from "../../components/ui/input.tsx";
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
  const { refusal, refuse, clear, form: formRef, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const [invited, setInvited] = useState<Invitation | null>(null);
  const id = useId();
  const roles = rolesToGrant(actorRole);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get("email") ?? "").trim();
    const role = String(data.get("role") ?? "member") as Role;
    setBusy(true);
    clear();
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
      refuse(caught);
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
        <form ref={formRef} onSubmit={onSubmit} className="grid gap-4" aria-label="Add a member">
          <ProblemField label="Email" id={`${id}-email`} message={at("email")}>
            <Input
              name="email"
              type="email"
              autoComplete="off"
              required
              maxLength={254}
              placeholder="ada@example.com"
              {...fieldProps(`${id}-email`, at("email"))}
            />
          </ProblemField>
          <ProblemField label="Role" id={`${id}-role`} message={at("role")}>
            <Select name="role" defaultValue="member" {...fieldProps(`${id}-role`, at("role"))}>
              {roles.map((role) => (
                <option key={role} value={role}>
                  {roleWords[role]}
                </option>
              ))}
            </Select>
          </ProblemField>
          <RefusalNote refusal={refusal} fields={["email", "role"]} />
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

import type { Invitation } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { Copy, MailPlus } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { keys } from "../../lib/query.ts";
import { roleWords } from "./member-rules.ts";
import { membersApi } from "./members-api.ts";

const dateFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });

/** A new invitation's link, shown once (the server keeps only its hash), with a copy button. */
export function InvitationLink({ invitation, url }: { invitation: Invitation; url: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div role="status" className="grid gap-2 rounded-md border border-border bg-muted p-3 text-sm">
      <p>
        No Parley account has <strong className="break-all">{invitation.email}</strong> yet. Send
        them this link: it lets them sign up and join as {roleWords[invitation.role].toLowerCase()},
        once, until {dateFormat.format(new Date(invitation.expiresAt))}. It is shown only now.
        {invitation.mailed ? " Parley mailed it to them too." : null}
      </p>
      <input
        readOnly
        aria-label="Invitation link"
        value={url}
        onFocus={(event) => event.currentTarget.select()}
        className="w-full rounded-md border border-input bg-background px-2 py-1 font-mono text-xs"
      />
      <Button
        type="button"
        size="sm"
        onClick={async () => {
          await navigator.clipboard.writeText(url).then(
            () => setCopied(true),
            () => toast.error("Copy failed: select the link and copy it yourself."),
          );
        }}
      >
        <Copy aria-hidden="true" />
        {copied ? "Copied" : "Copy link"}
      </Button>
    </div>
  );
}

/** The org's invitations still waiting to be used, each revocable; hidden when there are none. */
export function PendingInvitations({ orgId }: { orgId: string }) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const query = useQuery({
    queryKey: keys.invitations(orgId),
    queryFn: () => membersApi.invitations(orgId),
  });
  const pending = (query.data?.items ?? []).filter((item) => item.status === "pending");
  if (pending.length === 0 && !error) return null;
  return (
    <Card aria-labelledby="invitations-title" className="h-fit min-w-0">
      <CardHeader
        id="invitations-title"
        title="Pending invitations"
        description="Links sent to people who have not joined yet."
      />
      <CardBody>
        <ul className="grid gap-3">
          {pending.map((invitation) => (
            <li key={invitation.id} className="flex flex-wrap items-center justify-between gap-2">
              <span className="min-w-0 text-sm">
                <MailPlus aria-hidden="true" className="mr-1 inline size-4" />
                <span className="break-all">{invitation.email}</span>
                <span className="text-muted-foreground">
                  {" "}
                  · {roleWords[invitation.role]} · until{" "}
                  {dateFormat.format(new Date(invitation.expiresAt))}
                </span>
              </span>
              <Button
                type="button"
                size="sm"
                aria-label={`Revoke the invitation of ${invitation.email}`}
                onClick={async () => {
                  setError(null);
                  try {
                    await membersApi.revokeInvitation(orgId, invitation.id);
                    await queryClient.invalidateQueries({ queryKey: keys.invitations(orgId) });
                  } catch (caught) {
                    setError(caught);
                  }
                }}
              >
                Revoke
              </Button>
            </li>
          ))}
        </ul>
        <ErrorNote error={error} />
      </CardBody>
    </Card>
  );
}

import type { Member, OrgSummary, Role } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { LogOut, UserMinus, Users } from "lucide-react";
import { useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../components/load-more.tsx";
import { Page } from "../components/page.tsx";
import { Badge } from "../components/ui/badge.tsx";
import { Button } from "../components/ui/button.tsx";
import { Card, CardHeader } from "../components/ui/card.tsx";
import { useConfirm } from "../components/ui/confirm.tsx";
import { Select } from "../components/ui/input.tsx";
import { EmptyState, ErrorNote, Loading } from "../components/ui/states.tsx";
import { Table, TBody, Td, THead, Th, Tr } from "../components/ui/table.tsx";
import { AddMemberForm } from "../features/members/add-member-form.tsx";
import { PendingInvitations } from "../features/members/invitations.tsx";
import {
  isLastOwner,
  mayRemove,
  memberName,
  ROLES,
  rolesToChange,
  roleWords,
} from "../features/members/member-rules.ts";
import { membersApi } from "../features/members/members-api.ts";
import { keys } from "../lib/query.ts";
import { canManage, useSession } from "../lib/session.tsx";
import { useMediaQuery } from "../lib/use-media-query.ts";
import { usePaged } from "../lib/use-paged.ts";

const dateFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });
const rank = (role: Role) => ROLES.length - ROLES.indexOf(role);

/**
 * Members of the current org. Owners and admins add, re-role and remove people with the controls
 * the server's rules allow them (orgs.ts); a member sees the list read-only and may leave. The
 * server stays the judge: its refusals (the last owner, a race with another admin) show as said.
 */
export default function MembersPage() {
  const { org } = useSession();
  if (!org) return null;
  return <MembersOf org={org} />;
}

function MembersOf({ org }: { org: OrgSummary }) {
  const manage = canManage(org);
  const { query, items, more, firstPageError } = usePaged(keys.members(org.id), (cursor) =>
    membersApi.members(org.id, cursor),
  );
  return (
    <Page
      title="Members"
      heading={`Members of ${org.name}`}
      description={
        manage
          ? "Who can use this organization's projects and credits, and what each may do."
          : "Who can use this organization. Only owners and admins can add members or change roles."
      }
    >
      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_20rem]">
        {/* min-w-0: the grid cell may be narrower than the table, which then scrolls in its box. */}
        <Card aria-labelledby="people-title" className="min-w-0 self-start">
          <CardHeader
            id="people-title"
            title="People"
            description={`${items.length}${more.hasMore ? "+" : ""} ${items.length === 1 ? "person" : "people"}`}
          />
          <div className="grid gap-3 px-2 pt-3 pb-3 sm:px-3">
            {query.isPending ? (
              <div className="px-3">
                <Loading label="Loading members…" />
              </div>
            ) : firstPageError ? (
              <div className="px-3">
                <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
              </div>
            ) : items.length === 0 ? (
              <EmptyState icon={<Users />} title="No members." />
            ) : (
              <MembersTable org={org} members={items} complete={!more.hasMore} />
            )}
            <LoadMore more={more} label="More members" />
          </div>
        </Card>
        {manage ? (
          <div className="grid h-fit gap-6">
            <AddMemberForm orgId={org.id} orgName={org.name} actorRole={org.role} />
            <PendingInvitations orgId={org.id} />
          </div>
        ) : null}
      </div>
    </Page>
  );
}

function MembersTable({
  org,
  members,
  complete,
}: {
  org: OrgSummary;
  members: Member[];
  /** Every member has loaded (no further page): the only owner is known. */
  complete: boolean;
}) {
  const { me, reload } = useSession();
  const confirm = useConfirm();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<{ userId: string; role?: Role } | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: keys.members(org.id) });
  const wide = useMediaQuery("(min-width: 40rem)");

  async function changeRole(member: Member, role: Role) {
    const self = member.userId === me?.id;
    const name = memberName(member);
    if (!self && (role === "owner" || member.role === "owner")) {
      // The owner role is the one that can take everything else away: given or taken, asked first.
      const ok = await confirm(
        role === "owner"
          ? {
              title: `Make ${name} an owner?`,
              description: `Owners can do everything in ${org.name}: manage billing and members, erase data, and change or remove any owner, you included.`,
              confirmLabel: "Make owner",
            }
          : {
              title: `Make ${name} ${role === "admin" ? "an admin" : "a member"}?`,
              description: `${name} can no longer grant or take away the owner role${role === "member" ? ", manage members, billing or erasure" : ""} in ${org.name}.`,
              confirmLabel: "Change role",
              destructive: true,
            },
      );
      if (!ok) return;
    }
    if (self && rank(role) < rank(member.role)) {
      const ok = await confirm({
        title: `Make yourself ${role === "admin" ? "an admin" : "a member"}?`,
        description:
          role === "member"
            ? `You can no longer manage members, billing or erasure in ${org.name}. Only an owner or admin can give the role back.`
            : `You can no longer grant or take away the owner role in ${org.name}. Only an owner can give it back.`,
        confirmLabel: "Change my role",
        destructive: true,
      });
      if (!ok) return;
    }
    setBusy({ userId: member.userId, role });
    setError(null);
    try {
      await membersApi.updateMember(org.id, member.userId, role);
      toast.success(
        self
          ? `You are now ${roleWords[role].toLowerCase()} of ${org.name}.`
          : `${memberName(member)} is now ${roleWords[role].toLowerCase()}.`,
      );
      // The shell and this screen read the role from /api/me: show the new rights at once.
      if (self) await reload();
      await refresh();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  }

  async function remove(member: Member) {
    const name = memberName(member);
    const ok = await confirm({
      title: `Remove ${name}?`,
      description: `Remove ${name} from ${org.name}? They lose access at once; their sessions stay until erased.`,
      confirmLabel: "Remove member",
      destructive: true,
    });
    if (!ok) return;
    setBusy({ userId: member.userId });
    setError(null);
    try {
      await membersApi.removeMember(org.id, member.userId);
      toast.success(`${name} was removed from ${org.name}.`);
      await refresh();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  }

  async function leave(member: Member) {
    const ok = await confirm({
      title: `Leave ${org.name}?`,
      description: `You lose access to its projects, sessions and credits at once; your sessions stay until erased. An owner or admin can add you again.`,
      confirmLabel: "Leave organization",
      destructive: true,
    });
    if (!ok) return;
    setBusy({ userId: member.userId });
    setError(null);
    try {
      await membersApi.removeMember(org.id, member.userId);
      toast.success(`You left ${org.name}.`);
      await reload();
      await navigate({ to: "/projects" });
    } catch (caught) {
      // The last owner cannot leave: the server's message says what to do first.
      setError(caught);
      setBusy(null);
    }
  }

  /** One person's name, role control and action, laid out by the table or the phone's cards. */
  function controlsOf(member: Member) {
    const self = member.userId === me?.id;
    const name = memberName(member);
    // The only owner keeps the role and stays: the row says so instead of offering either.
    const lastOwner = self && isLastOwner(members, complete, me?.id);
    const roles = lastOwner ? [] : rolesToChange(org.role, member.role);
    const rowBusy = busy?.userId === member.userId;
    const role =
      roles.length > 0 ? (
        // A box of its own width: a table cell squeezed the select to "M…" (the outside probe).
        <div className="w-32 shrink-0">
          <Select
            aria-label={`Role of ${name}`}
            value={rowBusy && busy?.role ? busy.role : member.role}
            disabled={busy !== null}
            onChange={(event) => void changeRole(member, event.target.value as Role)}
          >
            {roles.map((option) => (
              <option key={option} value={option}>
                {roleWords[option]}
              </option>
            ))}
          </Select>
        </div>
      ) : (
        <Badge tone={member.role === "member" ? "neutral" : "info"}>{roleWords[member.role]}</Badge>
      );
    const action = lastOwner ? (
      <span className="text-muted-foreground text-xs">The only owner can't leave</span>
    ) : self ? (
      <Button size="sm" disabled={busy !== null} onClick={() => void leave(member)}>
        <LogOut aria-hidden="true" />
        {rowBusy ? "Leaving…" : "Leave"}
      </Button>
    ) : mayRemove(org.role, member.role) ? (
      <Button
        size="sm"
        variant="ghost"
        aria-label={`Remove ${name}`}
        disabled={busy !== null}
        onClick={() => void remove(member)}
      >
        <UserMinus aria-hidden="true" />
        Remove
      </Button>
    ) : null;
    return { member, self, name, role, action };
  }
  const rows = members.map(controlsOf);

  return (
    <div className="grid gap-3">
      {error ? (
        <div className="px-3">
          <ErrorNote error={error} />
        </div>
      ) : null}
      {wide ? (
        <Table aria-label={`Members of ${org.name}`}>
          <THead>
            <Tr>
              <Th scope="col">Name</Th>
              <Th scope="col">Email</Th>
              <Th scope="col">Role</Th>
              <Th scope="col">Joined</Th>
              <Th scope="col">
                <span className="sr-only">Actions</span>
              </Th>
            </Tr>
          </THead>
          <TBody>
            {rows.map(({ member, self, name, role, action }) => (
              <Tr key={member.userId}>
                <Td className="font-medium">
                  <span className="whitespace-nowrap">{name}</span>
                  {self ? <span className="text-muted-foreground"> (you)</span> : null}
                </Td>
                <Td className="whitespace-nowrap text-muted-foreground">{member.email}</Td>
                <Td>{role}</Td>
                <Td className="whitespace-nowrap text-muted-foreground">
                  {dateFormat.format(new Date(member.joinedAt))}
                </Td>
                <Td className="text-right">{action}</Td>
              </Tr>
            ))}
          </TBody>
        </Table>
      ) : (
        // On a phone each person is a card: name and email, then role, joined and the action,
        // all on screen (a table scrolled its role and Remove off the side).
        <ul aria-label={`Members of ${org.name}`} className="grid gap-2 px-3 pb-3">
          {rows.map(({ member, self, name, role, action }) => (
            <li key={member.userId} className="grid gap-2 rounded-md border border-border p-3">
              <div className="min-w-0">
                <p className="font-medium text-sm">
                  {name}
                  {self ? <span className="text-muted-foreground"> (you)</span> : null}
                </p>
                <p className="break-all text-muted-foreground text-sm">{member.email}</p>
              </div>
              <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
                {role}
                <span className="text-muted-foreground text-xs">
                  Joined {dateFormat.format(new Date(member.joinedAt))}
                </span>
                <span className="ml-auto">{action}</span>
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

import type { Member, Role } from "@parley/shared";
import { type FormEvent, useState } from "react";
import { FormError } from "../components/field-error.tsx";
import { LoadMore } from "../components/load-more.tsx";
import { api, errorMessage } from "../lib/api.ts";
import { navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.tsx";
import { usePages } from "../lib/use-pages.ts";

const ROLES: readonly Role[] = ["member", "admin", "owner"];

/**
 * Members of the current org. The server enforces the owner rules (admins manage members and
 * admins, only owners touch owners, an org keeps one owner); this screen shows its refusals as is.
 */
export default function MembersPage() {
  const { me, org, reload: reloadMe } = useSession();
  const orgId = org?.id ?? "";
  const [members, reload, moreMembers] = usePages((cursor) => api.members(orgId, cursor), [orgId]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const canManage = org?.role === "owner" || org?.role === "admin";

  /** Runs one change; the server's refusal (403 role rules, 409 last owner) is shown as is. */
  async function run(
    key: string,
    action: () => Promise<unknown>,
    after?: () => void,
  ): Promise<boolean> {
    setBusy(key);
    setError(null);
    try {
      await action();
      if (after) after();
      else reload();
      return true;
    } catch (caught) {
      setError(caught);
      // A refused role change leaves the select on the server's value.
      reload();
      return false;
    } finally {
      setBusy(null);
    }
  }

  async function onInvite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const email = String(data.get("email") ?? "").trim();
    const role = String(data.get("role") ?? "member") as Role;
    if (await run("invite", () => api.addMember(orgId, { email, role }))) form.reset();
  }

  const onLeave = (member: Member) =>
    run(
      member.userId,
      () => api.removeMember(orgId, member.userId),
      () => {
        void reloadMe().then(() => navigate("/projects"));
      },
    );

  return (
    <section aria-labelledby="members-title" className="stack">
      <h1 id="members-title">Members{org ? ` of ${org.name}` : ""}</h1>
      <FormError error={error} />
      {members.status === "loading" ? (
        <p role="status" className="muted">
          Loading members…
        </p>
      ) : members.status === "error" ? (
        <p role="alert" className="error">
          {errorMessage(members.error)}
        </p>
      ) : members.data.items.length === 0 ? (
        <p className="empty">No members.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Members and their roles</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {members.data.items.map((member) => {
                const self = member.userId === me?.id;
                return (
                  <tr key={member.userId}>
                    <td>
                      {member.name}
                      {self ? <span className="muted"> (you)</span> : null}
                    </td>
                    <td>{member.email}</td>
                    <td>
                      {canManage ? (
                        <select
                          aria-label={`Role of ${member.email}`}
                          value={member.role}
                          disabled={busy !== null}
                          onChange={(event) =>
                            void run(member.userId, () =>
                              api.updateMember(orgId, member.userId, event.target.value as Role),
                            )
                          }
                        >
                          {ROLES.map((role) => (
                            <option key={role} value={role}>
                              {role}
                            </option>
                          ))}
                        </select>
                      ) : (
                        member.role
                      )}
                    </td>
                    <td>{new Date(member.joinedAt).toLocaleDateString()}</td>
                    <td>
                      {self ? (
                        <button
                          type="button"
                          disabled={busy !== null}
                          onClick={() => void onLeave(member)}
                        >
                          Leave
                        </button>
                      ) : canManage ? (
                        <button
                          type="button"
                          className="danger"
                          disabled={busy !== null}
                          aria-label={`Remove ${member.email}`}
                          onClick={() =>
                            void run(member.userId, () => api.removeMember(orgId, member.userId))
                          }
                        >
                          Remove
                        </button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <LoadMore more={moreMembers} label="More members" />
      {canManage ? (
        <form onSubmit={onInvite} className="card stack narrow" aria-labelledby="invite-title">
          <h2 id="invite-title">Add a member</h2>
          <p className="muted">They need a Parley account with this email.</p>
          <label>
            <span>Email</span>
            <input name="email" type="email" autoComplete="off" required />
          </label>
          <label>
            <span>Role</span>
            <select name="role" defaultValue="member">
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" className="primary" disabled={busy !== null}>
            {busy === "invite" ? "Adding…" : "Add member"}
          </button>
        </form>
      ) : (
        <p className="muted">Only owners and admins can add members or change roles.</p>
      )}
    </section>
  );
}

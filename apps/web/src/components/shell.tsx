import type { ReactNode } from "react";
import { Link, navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.tsx";

/** Header with navigation, the org switcher and sign-out, around every signed-in screen. */
export function Shell({ children }: { children: ReactNode }) {
  const { me, org, selectOrg, signOut } = useSession();
  return (
    <>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/projects" className="brand">
          Parley
        </Link>
        <nav aria-label="Main">
          <Link to="/projects">Projects</Link>
          <Link to="/members">Members</Link>
          <Link to="/billing">Billing</Link>
          <Link to="/admin">Admin</Link>
        </nav>
        <div className="topbar-end">
          {me && me.orgs.length > 0 ? (
            <label className="inline">
              <span>Organization</span>
              <select
                value={org?.id ?? ""}
                onChange={(event) => {
                  selectOrg(event.target.value);
                  navigate("/projects");
                }}
              >
                {me.orgs.map((candidate) => (
                  <option key={candidate.id} value={candidate.id}>
                    {candidate.name} ({candidate.role})
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <Link to="/orgs/new">New organization</Link>
          <span className="muted">{me?.email}</span>
          <button
            type="button"
            onClick={() => {
              void signOut().then(() => navigate("/signin"));
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="content" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

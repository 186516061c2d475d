import { type FormEvent, useState } from "react";
import { FormError } from "../components/field-error.tsx";
import { LoadMore } from "../components/load-more.tsx";
import { NewOrgForm } from "../features/orgs/new-org-form.tsx";
import { api, errorMessage } from "../lib/api.ts";
import { Link, navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.tsx";
import { usePages } from "../lib/use-pages.ts";

/** The current org's projects, and a form to create one. */
export default function ProjectsPage() {
  const { org } = useSession();
  const orgId = org?.id ?? null;
  const [projects, , moreProjects] = usePages(
    (cursor) =>
      orgId ? api.projects(orgId, cursor) : Promise.resolve({ items: [], nextCursor: null }),
    [orgId],
  );
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onCreate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!orgId) return;
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      const project = await api.createProject(orgId, { name });
      navigate(`/projects/${encodeURIComponent(project.id)}`);
    } catch (caught) {
      setError(caught);
      setBusy(false);
    }
  }

  if (!org) {
    return (
      <section className="stack">
        <h1>No organization yet</h1>
        <p>You do not belong to any organization. Create one to start a project.</p>
        <NewOrgForm />
      </section>
    );
  }
  return (
    <section aria-labelledby="projects-title" className="stack">
      <h1 id="projects-title">Projects in {org.name}</h1>
      {projects.status === "loading" ? (
        <p role="status" className="muted">
          Loading projects…
        </p>
      ) : projects.status === "error" ? (
        <p role="alert" className="error">
          {errorMessage(projects.error)}
        </p>
      ) : projects.data.items.length === 0 ? (
        <p className="empty">No projects yet. Create the first one below.</p>
      ) : (
        <ul className="list">
          {projects.data.items.map((project) => (
            <li key={project.id}>
              <Link to={`/projects/${encodeURIComponent(project.id)}`}>{project.name}</Link>
              <span className="muted">
                {" "}
                · updated {new Date(project.updatedAt).toLocaleDateString()}
              </span>
            </li>
          ))}
        </ul>
      )}
      <LoadMore more={moreProjects} label="More projects" />
      <form onSubmit={onCreate} className="card stack" aria-labelledby="new-project">
        <h2 id="new-project">New project</h2>
        <label>
          <span>Name</span>
          <input name="name" required maxLength={100} />
        </label>
        <FormError error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Create project
        </button>
      </form>
    </section>
  );
}

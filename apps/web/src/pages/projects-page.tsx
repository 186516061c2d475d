import { useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { FolderKanban, Plus } from "lucide-react";
import { type FormEvent, useId, useState } from "react";
import { LoadMore } from "../components/load-more.tsx";
import { Page } from "../components/page.tsx";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../components/refusal.tsx";
import { Button } from "../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../components/ui/card.tsx";
import { Input } from "../components/ui/input.tsx";
import { EmptyState, ErrorNote, Loading } from "../components/ui/states.tsx";
import { NewOrgForm } from "../features/orgs/new-org-form.tsx";
import { orgsApi } from "../lib/orgs-api.ts";
import { keys } from "../lib/query.ts";
import { useSession } from "../lib/session.tsx";
import { usePaged } from "../lib/use-paged.ts";

const dateFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium" });

/** The current org's projects, and a form to create one. */
export default function ProjectsPage() {
  const { org } = useSession();
  if (!org) {
    return (
      <Page
        title="No organization yet"
        width="narrow"
        description="You do not belong to any organization. Create one to start a project."
      >
        <Card>
          <CardBody>
            <NewOrgForm />
          </CardBody>
        </Card>
      </Page>
    );
  }
  return <ProjectsOf orgId={org.id} orgName={org.name} />;
}

function ProjectsOf({ orgId, orgName }: { orgId: string; orgName: string }) {
  const { query, items, more, firstPageError } = usePaged(keys.projects(orgId), (cursor) =>
    orgsApi.projects(orgId, cursor),
  );
  return (
    <Page
      title="Projects"
      heading={`Projects in ${orgName}`}
      description="Each project has a shared memory, a free onboarding chat and the assistant sessions of its members."
    >
      <div className="grid gap-6 lg:grid-cols-[1fr_20rem]">
        <section aria-label="Projects" className="grid content-start gap-3">
          {query.isPending ? (
            <Loading label="Loading projects…" />
          ) : firstPageError ? (
            <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
          ) : items.length === 0 ? (
            <EmptyState icon={<FolderKanban />} title="No projects yet.">
              Create the first one: its onboarding chat is free to try.
            </EmptyState>
          ) : (
            <ul className="grid gap-3 sm:grid-cols-2">
              {items.map((project) => (
                <li key={project.id}>
                  <Link
                    to="/projects/$projectId"
                    params={{ projectId: project.id }}
                    className="grid h-full gap-1 rounded-xl border border-border bg-card p-4 shadow-xs transition-colors hover:border-primary/50 hover:bg-accent/40"
                  >
                    <span className="wrap-anywhere font-medium">{project.name}</span>
                    <span className="text-muted-foreground text-xs">
                      Updated {dateFormat.format(new Date(project.updatedAt))}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
          )}
          <LoadMore more={more} label="More projects" />
        </section>
        <NewProject orgId={orgId} />
      </div>
    </Page>
  );
}

function NewProject({ orgId }: { orgId: string }) {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const id = useId();
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onCreate(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name") ?? "").trim();
    setBusy(true);
    clear();
    try {
      const project = await orgsApi.createProject(orgId, { name });
      await queryClient.invalidateQueries({ queryKey: keys.projects(orgId) });
      await navigate({ to: "/projects/$projectId", params: { projectId: project.id } });
    } catch (caught) {
      refuse(caught);
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="new-project" className="h-fit">
      <CardHeader id="new-project" title="New project" />
      <CardBody>
        <form ref={form} onSubmit={onCreate} className="grid gap-4" aria-label="New project">
          <ProblemField label="Name" id={`${id}-name`} message={at("name")}>
            <Input
              name="name"
              required
              maxLength={100}
              placeholder="e.g. Customer onboarding"
              {...fieldProps(`${id}-name`, at("name"))}
            />
          </ProblemField>
          <RefusalNote refusal={refusal} fields={["name"]} />
          <Button type="submit" variant="primary" disabled={busy}>
            <Plus aria-hidden="true" />
            {busy ? "Creating…" : "Create project"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

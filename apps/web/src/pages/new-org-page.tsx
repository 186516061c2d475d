import { NewOrgForm } from "../features/orgs/new-org-form.tsx";

/** A page of its own for a new organization, reached from the header. */
export default function NewOrgPage() {
  return (
    <section className="stack narrow">
      <h1>Organizations</h1>
      <p className="muted">You will be its owner; you can invite members once it exists.</p>
      <NewOrgForm />
    </section>
  );
}

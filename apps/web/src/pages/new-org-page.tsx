import { Page } from "../components/page.tsx";
import { Card, CardBody } from "../components/ui/card.tsx";
import { NewOrgForm } from "../features/orgs/new-org-form.tsx";

/** A page of its own for a new organization, reached from the org switcher. */
export default function NewOrgPage() {
  return (
    <Page
      title="New organization"
      width="narrow"
      description="You will be its owner and can invite members once it exists."
    >
      <Card>
        <CardBody>
          <NewOrgForm />
        </CardBody>
      </Card>
    </Page>
  );
}

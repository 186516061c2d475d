import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { Page } from "../components/page.tsx";
import { Button } from "../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../components/ui/card.tsx";
import { useConfirm } from "../components/ui/confirm.tsx";
import { ErrorNote } from "../components/ui/states.tsx";
import { EmailForm, PasswordForm, ProfileForm } from "../features/account/account-forms.tsx";
import { NotificationSettings } from "../features/account/notification-settings.tsx";
import { DataExportCard } from "../features/exports/data-export-card.tsx";
import { api } from "../lib/api.ts";
import { dataRightsApi } from "../lib/data-rights-api.ts";
import { clearFlash, setFlash } from "../lib/flash.ts";
import { keys } from "../lib/query.ts";
import { useSession } from "../lib/session.tsx";
import { type ThemeChoice, useTheme } from "../lib/theme.ts";

/**
 * The signed-in person: who they are (name, and email changed through a mailed link), their
 * password, their billing mail, where they belong, their theme, downloading their data, and
 * deleting it all.
 */
export default function AccountPage() {
  const { me, reload } = useSession();
  const [theme, setTheme] = useTheme();
  if (!me) return null;
  return (
    <Page
      title="Account"
      width="narrow"
      description="Your profile, your organizations and this browser's settings."
    >
      <ProfileForm me={me} onSaved={reload} />
      <EmailForm me={me} />
      <PasswordForm />
      <NotificationSettings emailVerified={me.emailVerified} />
      <Card aria-labelledby="orgs-title">
        <CardHeader id="orgs-title" title="Organizations" />
        <CardBody>
          {me.orgs.length === 0 ? (
            <p className="text-muted-foreground text-sm">You do not belong to any organization.</p>
          ) : (
            <ul className="grid gap-2 text-sm">
              {me.orgs.map((org) => (
                <li key={org.id} className="flex items-center justify-between gap-3">
                  <span className="min-w-0 truncate">{org.name}</span>
                  <span className="text-muted-foreground capitalize">{org.role}</span>
                </li>
              ))}
            </ul>
          )}
        </CardBody>
      </Card>
      <Card aria-labelledby="theme-title">
        <CardHeader id="theme-title" title="Appearance" description="Kept in this browser." />
        <CardBody>
          <fieldset className="flex flex-wrap gap-4 text-sm">
            <legend className="sr-only">Theme</legend>
            {(["light", "dark", "system"] as const).map((value) => (
              <label key={value} className="flex items-center gap-2 capitalize">
                <input
                  type="radio"
                  name="theme"
                  value={value}
                  checked={theme === value}
                  onChange={() => setTheme(value as ThemeChoice)}
                  className="accent-primary"
                />
                {value}
              </label>
            ))}
          </fieldset>
        </CardBody>
      </Card>
      <DataExportCard
        id="export-title"
        title="Download your data"
        description="Your profile, memberships, sessions with their transcripts and your usage, as one JSON file (GDPR Art. 15 and 20). The link is good for 24 hours."
        startLabel="Download your data"
        queryKey={keys.accountExports}
        list={() => dataRightsApi.accountExports()}
        start={() => dataRightsApi.startAccountExport()}
      />
      <DeleteAccount email={me.email} />
    </Page>
  );
}

/**
 * Deletes the signed-in user's account after a typed confirmation. The server refuses (409) while
 * the user is the only owner of an org with other members; its message says what to do.
 */
function DeleteAccount({ email }: { email: string }) {
  const confirm = useConfirm();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function onDelete() {
    const ok = await confirm({
      title: "Delete your account?",
      description:
        "This erases your memberships, your sessions and every organization you belong to alone, from every store. It cannot be undone.",
      confirmLabel: "Delete my account permanently",
      destructive: true,
      typeToConfirm: email,
    });
    if (!ok) return;
    setBusy(true);
    setError(null);
    // Set before the call: deleting signs out at once, and the shell's own redirect to sign-in
    // may run before this page's navigation does.
    setFlash("account-deleted");
    try {
      await api.deleteAccount();
      await navigate({ to: "/signin", replace: true });
    } catch (caught) {
      clearFlash();
      setError(caught);
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="delete-title" className="border-destructive/40">
      <CardHeader
        id="delete-title"
        title="Delete account"
        description="Erases you from Parley under GDPR Art. 17. The ledger keeps what was charged, under a pseudonym."
      />
      <CardBody className="grid gap-3">
        <ErrorNote error={error} />
        <div>
          <Button variant="destructive" disabled={busy} onClick={() => void onDelete()}>
            {busy ? "Deleting…" : "Delete my account"}
          </Button>
        </div>
      </CardBody>
    </Card>
  );
}

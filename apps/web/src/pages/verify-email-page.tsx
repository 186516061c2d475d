import type { VerifiedEmail } from "@parley/shared";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import { Button } from "../components/ui/button.tsx";
import { Email } from "../components/ui/email.tsx";
import { ErrorNote, Notice } from "../components/ui/states.tsx";
import { isApiError } from "../lib/api.ts";
import { mailApi } from "../lib/mail-api.ts";
import { useSession } from "../lib/session.tsx";
import { MailLinkScreen, takeLinkSecret } from "./recovery-pages.tsx";

/**
 * `/verify-email#vfy_...` (a sign-up's link) or `#eml_...` (a new address's): readable signed in or
 * out. It asks for a click before it uses the link, so a mail scanner that opens links does not
 * use it up; then says what changed. A used or expired link says so, with a way to a new one.
 */
export default function VerifyEmailPage() {
  const [secret] = useState(takeLinkSecret);
  const { me, reload } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<VerifiedEmail | null>(null);
  const changing = secret.startsWith("eml_");
  const gone = isApiError(error) && error.code === "gone";

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      setDone(await mailApi.verifyEmail(secret));
      // Read who they are again unless known to be signed out: a read still under way from the
      // page's load (me undefined) left before the address was confirmed, and its answer would
      // keep asking them to confirm it.
      if (me !== null) await reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  const title = changing ? "Confirm your new address" : "Confirm your email address";
  return (
    <MailLinkScreen title={done ? "Email address confirmed" : title}>
      {done ? (
        <Notice tone="success">
          {done.changed ? (
            <>
              You now sign in with <Email strong address={done.email} />.
            </>
          ) : (
            <>
              <Email strong address={done.email} /> is confirmed.
              {done.signupGrant ? " Your organization's free credits are on their way." : null}
            </>
          )}
        </Notice>
      ) : secret ? (
        <div className="grid gap-4 rounded-xl border border-border bg-card p-6 shadow-xs">
          <p className="text-muted-foreground text-sm">
            {changing
              ? "Confirm to make this address the one you sign in to Parley with."
              : "Confirm that this address is yours to finish setting up your account."}
          </p>
          <ErrorNote error={error} />
          <Button
            variant="primary"
            className="w-full"
            disabled={busy || gone}
            onClick={() => void confirm()}
          >
            {busy ? "Please wait…" : changing ? "Confirm my new address" : "Confirm my address"}
          </Button>
        </div>
      ) : (
        <Notice tone="warning">This page opens from the link in a verification mail.</Notice>
      )}
      <p className="text-center text-muted-foreground text-sm">
        {me ? (
          <Link to={gone ? "/account" : "/projects"} className="prose-link font-medium">
            {gone ? "Get a new link from your account" : "Go to your projects"}
          </Link>
        ) : (
          <Link to="/signin" className="prose-link font-medium">
            Sign in
          </Link>
        )}
      </p>
    </MailLinkScreen>
  );
}

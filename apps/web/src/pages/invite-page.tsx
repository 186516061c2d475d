import { useQuery } from "@tanstack/react-query";
import { Link, useLocation, useNavigate } from "@tanstack/react-router";
import { useEffect, useState } from "react";
import { Page } from "../components/page.tsx";
import { Button } from "../components/ui/button.tsx";
import { Card, CardBody } from "../components/ui/card.tsx";
import { ErrorNote, Loading } from "../components/ui/states.tsx";
import { roleWords } from "../features/members/member-rules.ts";
import { api, isApiError } from "../lib/api.ts";
import { useSession } from "../lib/session.tsx";

/** Where a tab keeps the invitation it opened while its reader signs up or in (then comes back). */
const KEPT = "parley.invitation";

/**
 * The secret of the invitation this tab opened: the link's fragment (`/invite#inv_...`, which the
 * browser never sends to a server, so no request log keeps it), else what this tab kept of it.
 */
function invitationSecret(fromLink: string): string {
  let secret = fromLink.replace(/^#/, "");
  try {
    secret = decodeURIComponent(secret);
  } catch {
    // Not percent-encoding after all: taken as it is (an unknown secret is refused by the server).
  }
  try {
    if (secret) sessionStorage.setItem(KEPT, secret);
    return secret || (sessionStorage.getItem(KEPT) ?? "");
  } catch {
    return secret;
  }
}

function forgetInvitation(): void {
  try {
    sessionStorage.removeItem(KEPT);
  } catch {
    // Nothing was kept.
  }
}

/**
 * `/invite#secret`, the link an owner or admin sent: which org and role it invites to, then sign
 * up or sign in (and come back here), then join. Open to signed-out visitors: the link's secret is
 * what lets them read it. A link of the first form, `/invite/:secret`, moves its secret into the
 * fragment at once.
 */
export default function InvitePage() {
  const { pathname, hash } = useLocation();
  const fromPath = /^\/invite\/([^/]+)$/.exec(pathname)?.[1];
  const navigate = useNavigate();
  const [secret] = useState(() => invitationSecret(fromPath ?? hash));
  useEffect(() => {
    if (fromPath) void navigate({ to: "/invite", hash: fromPath, replace: true });
  }, [fromPath, navigate]);
  return <InviteScreen secret={secret} />;
}

export function InviteScreen({ secret }: { secret: string }) {
  const { me, reload, selectOrg } = useSession();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const preview = useQuery({
    queryKey: ["invitation", secret],
    queryFn: () => api.invitationPreview(secret),
    retry: false,
  });
  // Back here after signing up or in: the secret waits in this tab, not in the address.
  const here = "/invite";

  async function join() {
    setBusy(true);
    setError(null);
    try {
      const joined = await api.acceptInvitation(secret);
      forgetInvitation();
      await reload();
      selectOrg(joined.orgId);
      await navigate({ to: "/projects" });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  const invitation = preview.data;
  return (
    <main
      id="content"
      className="grid min-h-dvh place-items-center overflow-x-hidden bg-muted/40 px-4 py-10"
    >
      <Page title="Invitation" heading="You are invited" width="narrow">
        <Card>
          <CardBody>
            {preview.isPending || me === undefined ? (
              <Loading label="Reading the invitation…" />
            ) : preview.isError ? (
              <p role="alert">
                {isApiError(preview.error) && preview.error.code === "gone"
                  ? `${preview.error.message}. Ask whoever invited you for a new link.`
                  : "This invitation link is not valid. Ask whoever invited you for a new one."}
              </p>
            ) : invitation ? (
              <div className="grid gap-4">
                <p>
                  Join <strong>{invitation.orgName}</strong> on Parley as{" "}
                  {roleWords[invitation.role].toLowerCase()}. The invitation is for{" "}
                  <strong className="break-all">{invitation.email}</strong>.
                </p>
                {me ? (
                  <>
                    <p className="text-muted-foreground text-sm">
                      You are signed in as <span className="break-all">{me.email}</span>. The
                      invitation is taken only by the account with the invited email.
                    </p>
                    <ErrorNote error={error} />
                    <Button
                      type="button"
                      variant="primary"
                      disabled={busy}
                      onClick={join}
                      className="max-w-full justify-self-start"
                    >
                      <span className="truncate">
                        {busy ? "Joining…" : `Join ${invitation.orgName}`}
                      </span>
                    </Button>
                  </>
                ) : (
                  <div className="flex flex-wrap gap-3">
                    <Link
                      to="/signup"
                      search={{ next: here }}
                      className="inline-flex h-9 max-w-full items-center rounded-md bg-primary px-4 font-medium text-primary-foreground text-sm"
                    >
                      <span className="truncate">Sign up with {invitation.email}</span>
                    </Link>
                    <Link
                      to="/signin"
                      search={{ next: here }}
                      className="prose-link inline-flex h-9 items-center font-medium text-sm"
                    >
                      I have an account
                    </Link>
                  </div>
                )}
              </div>
            ) : null}
          </CardBody>
        </Card>
      </Page>
    </main>
  );
}

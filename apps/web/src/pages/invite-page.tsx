import { sentence } from "@parley/chat-ui";
import type { InvitationPreview } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { Link, useLocation, useNavigate } from "@tanstack/react-router";
import { Lock } from "lucide-react";
import { type FormEvent, useEffect, useId, useState } from "react";
import { Page } from "../components/page.tsx";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../components/refusal.tsx";
import { Button } from "../components/ui/button.tsx";
import { Card, CardBody } from "../components/ui/card.tsx";
import { Email } from "../components/ui/email.tsx";
import { Input } from "../components/ui/input.tsx";
import { ErrorNote, Loading } from "../components/ui/states.tsx";
import { roleWords } from "../features/members/member-rules.ts";
import { membersApi } from "../features/members/members-api.ts";
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
    queryFn: () => membersApi.invitationPreview(secret),
    retry: false,
  });
  // Back here after signing up or in: the secret waits in this tab, not in the address.
  const here = "/invite";

  async function join() {
    setBusy(true);
    setError(null);
    try {
      await joined(await membersApi.acceptInvitation(secret));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  /** In: the org opens, and the link is forgotten (it is used). */
  async function joined({ orgId }: { orgId: string }) {
    forgetInvitation();
    await reload();
    selectOrg(orgId);
    await navigate({ to: "/projects" });
  }

  const invitation = preview.data;
  return (
    <main
      id="content"
      className="grid min-h-dvh place-items-center overflow-x-hidden bg-muted/40 px-4 py-10"
    >
      <Page
        title={invitation ? `Join ${invitation.orgName}` : "Invitation"}
        heading={invitation ? `Join ${invitation.orgName}` : "You are invited"}
        width="narrow"
      >
        <Card>
          <CardBody>
            {preview.isPending || me === undefined ? (
              <Loading label="Reading the invitation…" />
            ) : preview.isError ? (
              <p role="alert">
                {isApiError(preview.error) && preview.error.code === "gone"
                  ? `${sentence(preview.error.message)} Ask whoever invited you for a new link.`
                  : "This invitation link is not valid. Ask whoever invited you for a new one."}
              </p>
            ) : invitation ? (
              <div className="grid gap-4">
                <p>
                  Join <strong>{invitation.orgName}</strong> on Parley as{" "}
                  {roleWords[invitation.role].toLowerCase()}. The invitation is for{" "}
                  <Email strong address={invitation.email} />.
                </p>
                {me ? (
                  <>
                    <p className="text-muted-foreground text-sm">
                      You are signed in as <Email address={me.email} />. The invitation is taken
                      only by the account with the invited email.
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
                  <>
                    <JoinForm
                      invitation={invitation}
                      secret={secret}
                      onJoined={joined}
                      onJoinFailed={(caught) => {
                        // Signed up, but the link could not be taken (revoked meanwhile): signed
                        // in now, the screen says why and offers Join again.
                        setError(caught);
                        void reload();
                      }}
                    />
                    <p className="text-muted-foreground text-sm">
                      Already on Parley with this email?{" "}
                      <Link to="/signin" search={{ next: here }} className="prose-link font-medium">
                        Sign in to join
                      </Link>
                    </p>
                  </>
                )}
              </div>
            ) : null}
          </CardBody>
        </Card>
      </Page>
    </main>
  );
}

/**
 * The invitee's sign-up, on the invitation itself: the invited email filled in and locked (the
 * link is for that address only), no organization of their own (they join this one), and one
 * button that makes the account and joins.
 */
function JoinForm({
  invitation,
  secret,
  onJoined,
  onJoinFailed,
}: {
  invitation: InvitationPreview;
  secret: string;
  onJoined: (joined: { orgId: string }) => Promise<void>;
  /** The account was made but the invitation not taken. */
  onJoinFailed: (error: unknown) => void;
}) {
  const id = useId();
  const { refusal, refuse, clear, form: formRef, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const label = `Join ${invitation.orgName}`;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    clear();
    try {
      await api.signup({
        email: invitation.email,
        password: String(form.get("password") ?? ""),
        name: String(form.get("name") ?? ""),
        invitation: secret,
      });
    } catch (caught) {
      refuse(caught);
      setBusy(false);
      return;
    }
    try {
      await onJoined(await membersApi.acceptInvitation(secret));
    } catch (caught) {
      onJoinFailed(caught);
    }
  }

  return (
    <form ref={formRef} onSubmit={onSubmit} aria-label={label} className="grid gap-4">
      <ProblemField label="Name" id={`${id}-name`} message={at("name")}>
        <Input
          name="name"
          autoComplete="name"
          required
          maxLength={100}
          {...fieldProps(`${id}-name`, at("name"))}
        />
      </ProblemField>
      <ProblemField
        label="Email"
        hint="The invitation is for this address."
        id={`${id}-email`}
        message={at("email")}
      >
        <span className="relative block">
          <Input
            name="email"
            type="email"
            autoComplete="email"
            value={invitation.email}
            readOnly
            className="bg-muted pr-9 text-muted-foreground"
            {...fieldProps(`${id}-email`, at("email"))}
          />
          <Lock
            aria-hidden="true"
            className="-translate-y-1/2 pointer-events-none absolute top-1/2 right-3 size-4 text-muted-foreground"
          />
        </span>
      </ProblemField>
      <ProblemField
        label="Password"
        hint="At least 10 characters."
        id={`${id}-password`}
        message={at("password")}
      >
        <Input
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          {...fieldProps(`${id}-password`, at("password"))}
        />
      </ProblemField>
      <RefusalNote refusal={refusal} fields={["name", "email", "password"]} />
      <Button
        type="submit"
        variant="primary"
        disabled={busy}
        className="max-w-full justify-self-start"
      >
        <span className="truncate">{busy ? "Joining…" : label}</span>
      </Button>
    </form>
  );
}

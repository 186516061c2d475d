import { Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, type ReactNode, useId, useState } from "react";
import { useDocumentTitle } from "../components/page.tsx";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../components/refusal.tsx";
import { Button } from "../components/ui/button.tsx";
import { Field, Input } from "../components/ui/input.tsx";
import { Notice } from "../components/ui/states.tsx";
import { isApiError } from "../lib/api.ts";
import { setFlash } from "../lib/flash.ts";
import { mailApi } from "../lib/mail-api.ts";
import { useSession } from "../lib/session.tsx";

/**
 * Getting back into an account (docs/2026-12-06-mail.md): asking for a reset link by mail, and the
 * page that link opens (`/reset-password#rst_...`), which sets the new password.
 */

/**
 * The secret a mailed link carries in its fragment (which browsers never send to a server), read
 * once; the address bar then drops it, so it stays out of the history and off the screen.
 */
export function takeLinkSecret(): string {
  const secret = window.location.hash.replace(/^#/, "");
  if (secret) window.history.replaceState(window.history.state, "", window.location.pathname);
  return secret;
}

/** The frame of a screen opened from a mail: centred, signed in or out. */
export function MailLinkScreen({ title, children }: { title: string; children: ReactNode }) {
  useDocumentTitle(title);
  return (
    <main id="content" className="grid min-h-dvh place-items-center bg-muted/40 px-4 py-10">
      <div className="grid w-full max-w-sm gap-6">
        <div className="grid justify-items-center gap-2 text-center">
          <img src="/favicon.svg" alt="" width={40} height={40} />
          <h1 className="font-semibold text-2xl tracking-tight">{title}</h1>
        </div>
        {children}
      </div>
    </main>
  );
}

const formBox = "grid gap-4 rounded-xl border border-border bg-card p-6 shadow-xs";

/** `/forgot-password`: a reset link by mail. The answer is the same for every address. */
export function ForgotPasswordPage() {
  const id = useId();
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  useDocumentTitle("Forgot your password");

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const email = String(new FormData(event.currentTarget).get("email") ?? "").trim();
    setBusy(true);
    clear();
    try {
      await mailApi.requestPasswordReset(email);
      setSentTo(email);
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="grid w-full max-w-sm gap-6">
      <div className="grid justify-items-center gap-2 text-center">
        <img src="/favicon.svg" alt="" width={40} height={40} />
        <h1 className="font-semibold text-2xl tracking-tight">Forgot your password</h1>
        <p className="text-muted-foreground text-sm">
          We mail you a link to choose a new one. It works once, for 30 minutes.
        </p>
      </div>
      {sentTo ? (
        <Notice tone="success">
          If an account has the address <strong className="break-all">{sentTo}</strong>, a link is
          on its way. Check your mail, spam folder included.
        </Notice>
      ) : null}
      <form ref={form} onSubmit={onSubmit} className={formBox} aria-label="Reset password">
        <ProblemField label="Email" id={`${id}-email`} message={at("email")}>
          <Input
            name="email"
            type="email"
            autoComplete="email"
            required
            maxLength={254}
            {...fieldProps(`${id}-email`, at("email"))}
          />
        </ProblemField>
        <RefusalNote refusal={refusal} fields={["email"]} />
        <Button type="submit" variant="primary" disabled={busy} className="w-full">
          {busy ? "Please wait…" : sentTo ? "Send another link" : "Send me a link"}
        </Button>
      </form>
      <p className="text-center text-muted-foreground text-sm">
        Remembered it?{" "}
        <Link to="/signin" className="prose-link font-medium">
          Sign in
        </Link>
      </p>
    </div>
  );
}

/** `/reset-password#rst_...`: the new password, twice; then every sign-in is over. */
export function ResetPasswordPage() {
  const [secret] = useState(takeLinkSecret);
  const { me, signOut } = useSession();
  const navigate = useNavigate();
  const id = useId();
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [gone, setGone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const password = String(data.get("password") ?? "");
    clear();
    if (password !== String(data.get("confirm") ?? "")) {
      refuseWith({ field: null, message: "The two passwords are not the same" });
      return;
    }
    setBusy(true);
    try {
      await mailApi.confirmPasswordReset(secret, password);
      // Every sign-in of the account ended, this browser's too (if it had one).
      if (me) await signOut().catch(() => undefined);
      setFlash("password-reset");
      await navigate({ to: "/signin", replace: true });
    } catch (caught) {
      setGone(isApiError(caught) && caught.code === "gone");
      refuse(caught);
      setBusy(false);
    }
  }

  return (
    <MailLinkScreen title="Choose a new password">
      {secret ? (
        <form ref={form} onSubmit={onSubmit} className={formBox} aria-label="Set a new password">
          <p className="text-muted-foreground text-sm">
            Setting it signs you out everywhere, this browser included.
          </p>
          <ProblemField
            label="New password"
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
              maxLength={256}
              {...fieldProps(`${id}-password`, at("password"))}
            />
          </ProblemField>
          <Field label="The same password again">
            <Input
              name="confirm"
              type="password"
              autoComplete="new-password"
              required
              minLength={10}
              maxLength={256}
            />
          </Field>
          <RefusalNote refusal={refusal} fields={["password"]} />
          <Button type="submit" variant="primary" disabled={busy || gone} className="w-full">
            {busy ? "Please wait…" : "Set the new password"}
          </Button>
        </form>
      ) : (
        <Notice tone="warning">This page opens from the link in a password reset mail.</Notice>
      )}
      <p className="text-center text-muted-foreground text-sm">
        {gone || !secret ? (
          <Link to="/forgot-password" className="prose-link font-medium">
            Ask for a new link
          </Link>
        ) : (
          <Link to="/signin" className="prose-link font-medium">
            Back to sign in
          </Link>
        )}
      </p>
    </MailLinkScreen>
  );
}

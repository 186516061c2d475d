import { Link, useSearch } from "@tanstack/react-router";
import { type FormEvent, useEffect, useId, useState } from "react";
import { useDocumentTitle } from "../components/page.tsx";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../components/refusal.tsx";
import { Button } from "../components/ui/button.tsx";
import { Input } from "../components/ui/input.tsx";
import { Notice } from "../components/ui/states.tsx";
import { api } from "../lib/api.ts";
import { clearFlash, peekFlash } from "../lib/flash.ts";
import { safeNext } from "../lib/next-path.ts";
import { useSession } from "../lib/session.tsx";

/** Sign in and sign up share one form; sign-up adds a name and an optional organization name. */
function AuthForm({ mode }: { mode: "signin" | "signup" }) {
  const { reload } = useSession();
  // The page a signed-out visitor asked for: kept when they switch between sign-in and sign-up.
  const search: { next?: string } = useSearch({ strict: false });
  const next = safeNext(search.next);
  const [flash] = useState(peekFlash);
  useEffect(clearFlash, []);
  const id = useId();
  const { refusal, refuse, clear, form: formRef, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const signup = mode === "signup";
  useDocumentTitle(signup ? "Create your account" : "Sign in");

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "");
    setBusy(true);
    clear();
    try {
      if (signup) {
        const orgName = text("orgName").trim();
        await api.signup({
          email: text("email"),
          password: text("password"),
          name: text("name"),
          ...(orgName ? { orgName } : {}),
        });
      } else {
        await api.login({ email: text("email"), password: text("password") });
      }
      // Signed in: the auth layout sends them on (to `next`, else the projects; router.tsx ToApp).
      await reload();
    } catch (caught) {
      refuse(caught);
      setBusy(false);
    }
  }

  return (
    <div className="grid w-full max-w-sm gap-6">
      <div className="grid justify-items-center gap-2 text-center">
        <img src="/favicon.svg" alt="" width={40} height={40} />
        <h1 className="font-semibold text-2xl tracking-tight">
          {signup ? "Create your account" : "Sign in to Parley"}
        </h1>
        <p className="text-muted-foreground text-sm">
          {signup
            ? "Your organization gets free credits once you confirm your email, and a free onboarding chat at once."
            : "Welcome back."}
        </p>
      </div>
      {flash === "account-deleted" && !signup ? (
        <Notice tone="success">
          Your account is being erased. You have been signed out everywhere.
        </Notice>
      ) : null}
      {flash === "password-reset" && !signup ? (
        <Notice tone="success">
          Your password is changed and every sign-in was ended. Sign in with the new one.
        </Notice>
      ) : null}
      <form
        ref={formRef}
        onSubmit={onSubmit}
        className="grid gap-4 rounded-xl border border-border bg-card p-6 shadow-xs"
        aria-label={signup ? "Sign up" : "Sign in"}
      >
        {signup ? (
          <ProblemField label="Name" id={`${id}-name`} message={at("name")}>
            <Input
              name="name"
              autoComplete="name"
              required
              maxLength={100}
              {...fieldProps(`${id}-name`, at("name"))}
            />
          </ProblemField>
        ) : null}
        <ProblemField label="Email" id={`${id}-email`} message={at("email")}>
          <Input
            name="email"
            type="email"
            autoComplete="email"
            required
            {...fieldProps(`${id}-email`, at("email"))}
          />
        </ProblemField>
        <ProblemField
          label="Password"
          id={`${id}-password`}
          message={at("password")}
          {...(signup ? { hint: "At least 10 characters." } : {})}
        >
          <Input
            name="password"
            type="password"
            autoComplete={signup ? "new-password" : "current-password"}
            required
            minLength={signup ? 10 : 1}
            {...fieldProps(`${id}-password`, at("password"))}
          />
        </ProblemField>
        {signup ? null : (
          <Link to="/forgot-password" className="prose-link justify-self-start text-sm">
            Forgot your password?
          </Link>
        )}
        {signup ? (
          <ProblemField
            label="Organization name (optional)"
            id={`${id}-org`}
            message={at("orgName")}
          >
            <Input
              name="orgName"
              autoComplete="organization"
              maxLength={100}
              {...fieldProps(`${id}-org`, at("orgName"))}
            />
          </ProblemField>
        ) : null}
        <RefusalNote
          refusal={refusal}
          fields={signup ? ["name", "email", "password", "orgName"] : ["email", "password"]}
        />
        <Button type="submit" variant="primary" disabled={busy} className="w-full">
          {busy ? "Please wait…" : signup ? "Sign up" : "Sign in"}
        </Button>
      </form>
      <p className="text-center text-muted-foreground text-sm">
        {signup ? (
          <>
            Already have an account?{" "}
            <Link to="/signin" search={next ? { next } : {}} className="prose-link font-medium">
              Sign in
            </Link>
          </>
        ) : (
          <>
            New to Parley?{" "}
            <Link to="/signup" search={next ? { next } : {}} className="prose-link font-medium">
              Create an account
            </Link>
          </>
        )}
      </p>
    </div>
  );
}

export function SignInPage() {
  return <AuthForm mode="signin" />;
}

export function SignUpPage() {
  return <AuthForm mode="signup" />;
}

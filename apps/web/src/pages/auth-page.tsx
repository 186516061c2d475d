import { type FormEvent, useState } from "react";
import { FormError } from "../components/field-error.tsx";
import { api } from "../lib/api.ts";
import { Link, navigate } from "../lib/router.tsx";
import { useSession } from "../lib/session.tsx";

/** Sign in and sign up share one form; sign-up adds a name and an optional organization name. */
export default function AuthPage({ mode }: { mode: "signin" | "signup" }) {
  const { reload } = useSession();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const signup = mode === "signup";

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "");
    setBusy(true);
    setError(null);
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
      await reload();
      navigate("/projects", { replace: true });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card narrow" aria-labelledby="auth-title">
      <h1 id="auth-title">{signup ? "Create your account" : "Sign in to Parley"}</h1>
      <form onSubmit={onSubmit} className="stack">
        {signup ? (
          <label>
            <span>Name</span>
            <input name="name" autoComplete="name" required maxLength={100} />
          </label>
        ) : null}
        <label>
          <span>Email</span>
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          <span>Password</span>
          <input
            name="password"
            type="password"
            autoComplete={signup ? "new-password" : "current-password"}
            required
            minLength={signup ? 10 : 1}
          />
          {signup ? <small className="muted">At least 10 characters.</small> : null}
        </label>
        {signup ? (
          <label>
            <span>Organization name (optional)</span>
            <input name="orgName" autoComplete="organization" maxLength={100} />
          </label>
        ) : null}
        <FormError error={error} />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Please wait…" : signup ? "Sign up" : "Sign in"}
        </button>
      </form>
      <p>
        {signup ? (
          <>
            Already have an account? <Link to="/signin">Sign in</Link>
          </>
        ) : (
          <>
            New to Parley? <Link to="/signup">Create an account</Link>
          </>
        )}
      </p>
    </section>
  );
}

import type { Me } from "@parley/shared";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Field, Input } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { api } from "../../lib/api.ts";

/**
 * The person's name and email, editable. A new email asks for the current password (the server
 * requires it: a stolen session alone must not take the account over).
 */
export function ProfileForm({ me, onSaved }: { me: Me; onSaved: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [email, setEmail] = useState(me.email);
  const emailChanged = email.trim().toLowerCase() !== me.email;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const name = String(data.get("name") ?? "").trim();
    const currentPassword = String(data.get("currentPassword") ?? "");
    setBusy(true);
    setError(null);
    try {
      await api.updateMe({
        name,
        ...(emailChanged ? { email: email.trim(), currentPassword } : {}),
      });
      await onSaved();
      toast.success("Profile saved.");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="profile-title">
      <CardHeader id="profile-title" title="Profile" />
      <CardBody>
        <form onSubmit={onSubmit} className="grid gap-4" aria-label="Profile">
          <Field label="Name">
            <Input name="name" required maxLength={100} defaultValue={me.name} />
          </Field>
          <Field label="Email">
            <Input
              name="email"
              type="email"
              required
              maxLength={254}
              value={email}
              onChange={(event) => setEmail(event.currentTarget.value)}
            />
          </Field>
          {emailChanged ? (
            <Field label="Current password (to change your email)">
              <Input
                name="currentPassword"
                type="password"
                required
                autoComplete="current-password"
              />
            </Field>
          ) : null}
          <ErrorNote error={error} />
          <Button type="submit" variant="primary" disabled={busy} className="justify-self-start">
            {busy ? "Saving…" : "Save profile"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

/** A new password, after the current one; every other sign-in of the account ends. */
export function PasswordForm() {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setBusy(true);
    setError(null);
    try {
      await api.changePassword({
        currentPassword: String(data.get("currentPassword") ?? ""),
        newPassword: String(data.get("newPassword") ?? ""),
      });
      form.reset();
      toast.success("Password changed. You were signed out everywhere else.");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="password-title">
      <CardHeader
        id="password-title"
        title="Password"
        description="Changing it signs you out on every other device."
      />
      <CardBody>
        <form onSubmit={onSubmit} className="grid gap-4" aria-label="Change password">
          <Field label="Current password">
            <Input
              name="currentPassword"
              type="password"
              required
              autoComplete="current-password"
            />
          </Field>
          <Field label="New password">
            <Input
              name="newPassword"
              type="password"
              required
              minLength={10}
              autoComplete="new-password"
            />
          </Field>
          <ErrorNote error={error} />
          <Button type="submit" disabled={busy} className="justify-self-start">
            {busy ? "Changing…" : "Change password"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

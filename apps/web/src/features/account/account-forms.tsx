import type { Me } from "@parley/shared";
import { type FormEvent, useState } from "react";
import { toast } from "sonner";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Email } from "../../components/ui/email.tsx";
import { Field, Input } from "../../components/ui/input.tsx";
import { ErrorNote, Notice } from "../../components/ui/states.tsx";
import { ApiError, api } from "../../lib/api.ts";
import { mailApi } from "../../lib/mail-api.ts";

/**
 * The person's name, editable, and their address with whether it is verified. The address changes
 * through `EmailForm`: a new one proves itself by a link first.
 */
export function ProfileForm({ me, onSaved }: { me: Me; onSaved: () => Promise<void> }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const name = String(data.get("name") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      await api.updateMe({ name });
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
          <div className="grid gap-1.5 text-sm">
            <span className="font-medium">Email</span>
            <span className="flex min-w-0 flex-wrap items-center gap-2">
              <Email className="min-w-0" address={me.email} />
              <Badge tone={me.emailVerified ? "success" : "warning"}>
                {me.emailVerified ? "Verified" : "Not verified"}
              </Badge>
            </span>
          </div>
          <ErrorNote error={error} />
          <Button type="submit" variant="primary" disabled={busy} className="justify-self-start">
            {busy ? "Saving…" : "Save profile"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

/**
 * A new address: a link goes there and a notice to the current one; the address changes when the
 * link is used. The answer is the same whether or not another account has the address.
 */
export function EmailForm({ me }: { me: Me }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const newEmail = String(data.get("newEmail") ?? "").trim();
    setError(null);
    if (newEmail.toLowerCase() === me.email) {
      setError(new ApiError("invalid_request", "This is your address already", 400, "newEmail"));
      return;
    }
    setBusy(true);
    try {
      await mailApi.changeEmail({ newEmail, password: String(data.get("password") ?? "") });
      form.reset();
      setSentTo(newEmail);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="email-title">
      <CardHeader
        id="email-title"
        title="Email address"
        description="We send a link to the new address; your address changes when you open it. Your current address is told too."
      />
      <CardBody className="grid gap-4">
        {sentTo ? (
          <Notice tone="success">
            Check <Email strong address={sentTo} />: open the link we sent there to finish. It works
            for 24 hours.
          </Notice>
        ) : null}
        <form onSubmit={onSubmit} className="grid gap-4" aria-label="Change email">
          <Field label="New email">
            <Input name="newEmail" type="email" required maxLength={254} autoComplete="email" />
          </Field>
          <Field label="Current password">
            <Input
              name="password"
              type="password"
              required
              maxLength={256}
              autoComplete="current-password"
            />
          </Field>
          <ErrorNote error={error} />
          <Button type="submit" disabled={busy} className="justify-self-start">
            {busy ? "Sending…" : "Send the link"}
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
              maxLength={256}
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

import type { Me } from "@parley/shared";
import { type FormEvent, useId, useState } from "react";
import { toast } from "sonner";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Email } from "../../components/ui/email.tsx";
import { Input } from "../../components/ui/input.tsx";
import { Notice } from "../../components/ui/states.tsx";
import { api } from "../../lib/api.ts";
import { mailApi } from "../../lib/mail-api.ts";

/**
 * The person's name, editable, and their address with whether it is verified. The address changes
 * through `EmailForm`: a new one proves itself by a link first.
 */
export function ProfileForm({ me, onSaved }: { me: Me; onSaved: () => Promise<void> }) {
  const id = useId();
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const name = String(data.get("name") ?? "").trim();
    setBusy(true);
    clear();
    try {
      await api.updateMe({ name });
      await onSaved();
      toast.success("Profile saved.");
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="profile-title">
      <CardHeader id="profile-title" title="Profile" />
      <CardBody>
        <form ref={form} onSubmit={onSubmit} className="grid gap-4" aria-label="Profile">
          <ProblemField label="Name" id={`${id}-name`} message={at("name")}>
            <Input
              name="name"
              required
              maxLength={100}
              defaultValue={me.name}
              {...fieldProps(`${id}-name`, at("name"))}
            />
          </ProblemField>
          <div className="grid gap-1.5 text-sm">
            <span className="font-medium">Email</span>
            <span className="flex min-w-0 flex-wrap items-center gap-2">
              <Email className="min-w-0" address={me.email} />
              <Badge tone={me.emailVerified ? "success" : "warning"}>
                {me.emailVerified ? "Verified" : "Not verified"}
              </Badge>
            </span>
          </div>
          <RefusalNote refusal={refusal} fields={["name"]} />
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
  const id = useId();
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const data = new FormData(element);
    const newEmail = String(data.get("newEmail") ?? "").trim();
    clear();
    if (newEmail.toLowerCase() === me.email) {
      refuseWith({ field: "newEmail", message: "This is your address already" });
      return;
    }
    setBusy(true);
    try {
      await mailApi.changeEmail({ newEmail, password: String(data.get("password") ?? "") });
      element.reset();
      setSentTo(newEmail);
    } catch (caught) {
      refuse(caught);
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
        <form ref={form} onSubmit={onSubmit} className="grid gap-4" aria-label="Change email">
          <ProblemField label="New email" id={`${id}-email`} message={at("newEmail")}>
            <Input
              name="newEmail"
              type="email"
              required
              maxLength={254}
              autoComplete="email"
              {...fieldProps(`${id}-email`, at("newEmail"))}
            />
          </ProblemField>
          <ProblemField label="Current password" id={`${id}-password`} message={at("password")}>
            <Input
              name="password"
              type="password"
              required
              maxLength={256}
              autoComplete="current-password"
              {...fieldProps(`${id}-password`, at("password"))}
            />
          </ProblemField>
          <RefusalNote refusal={refusal} fields={["newEmail", "password"]} />
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
  const id = useId();
  const { refusal, refuse, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const data = new FormData(element);
    setBusy(true);
    clear();
    try {
      await api.changePassword({
        currentPassword: String(data.get("currentPassword") ?? ""),
        newPassword: String(data.get("newPassword") ?? ""),
      });
      element.reset();
      toast.success("Password changed. You were signed out everywhere else.");
    } catch (caught) {
      refuse(caught);
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
        <form ref={form} onSubmit={onSubmit} className="grid gap-4" aria-label="Change password">
          <ProblemField
            label="Current password"
            id={`${id}-current`}
            message={at("currentPassword")}
          >
            <Input
              name="currentPassword"
              type="password"
              required
              autoComplete="current-password"
              {...fieldProps(`${id}-current`, at("currentPassword"))}
            />
          </ProblemField>
          <ProblemField label="New password" id={`${id}-new`} message={at("newPassword")}>
            <Input
              name="newPassword"
              type="password"
              required
              minLength={10}
              maxLength={256}
              autoComplete="new-password"
              {...fieldProps(`${id}-new`, at("newPassword"))}
            />
          </ProblemField>
          <RefusalNote refusal={refusal} fields={["currentPassword", "newPassword"]} />
          <Button type="submit" disabled={busy} className="justify-self-start">
            {busy ? "Changing…" : "Change password"}
          </Button>
        </form>
      </CardBody>
    </Card>
  );
}

import { useState } from "react";
import { mailApi } from "../lib/mail-api.ts";
import { refusalText } from "../lib/refusal.ts";
import { useSession } from "../lib/session.tsx";
import { Button } from "./ui/button.tsx";
import { Email } from "./ui/email.tsx";

/**
 * Under the bar of every signed-in screen while the account's address is unverified: what is
 * waiting for it (the sign-up credits, when they are: an invitee has none coming), and a new link
 * on demand (the older ones stop working).
 */
export function VerifyBanner() {
  const { me } = useSession();
  const [state, setState] = useState<"idle" | "sending" | "sent" | { error: string }>("idle");
  if (!me || me.emailVerified) return null;

  async function resend() {
    setState("sending");
    try {
      await mailApi.resendVerification();
      setState("sent");
    } catch (caught) {
      setState({ error: refusalText(caught) });
    }
  }

  return (
    <section
      aria-label="Confirm your email address"
      className="flex flex-wrap items-center justify-between gap-2 border-warning/40 border-b bg-warning/10 px-3 py-2 text-sm sm:px-4"
    >
      <p className="min-w-0">
        Confirm your email address: open the link we sent to <Email strong address={me.email} />.
        {me.signupGrantWaits ? " Your organization's free credits arrive then." : null}
        {state === "sent" ? <span role="status"> A new link is on its way.</span> : null}
        {typeof state === "object" ? <span role="alert"> {state.error}</span> : null}
      </p>
      <Button size="sm" disabled={state === "sending"} onClick={() => void resend()}>
        {state === "sending" ? "Sending…" : "Send the link again"}
      </Button>
    </section>
  );
}

import { Link } from "@tanstack/react-router";
import { buttonVariants } from "../../components/ui/button.tsx";

export type StopCode = "insufficient_credits" | "spend_limit";

/** Where a stop's action leads: the billing page's top-up or limits form, or nowhere (words only). */
export type StopActionTarget =
  | { kind: "link"; label: string; hash: "top-up" | "limits" }
  | { kind: "note"; label: string };

/**
 * The action that lifts a stop, for who is reading. Out of credits: "Top up". A spend limit: only
 * raising it helps, so owners and admins get "Raise the limit" and members are told to ask an admin;
 * never "Top up" for a limit (credits do not lift it).
 */
export function stopAction(code: StopCode, canManage: boolean): StopActionTarget {
  if (code === "spend_limit") {
    return canManage
      ? { kind: "link", label: "Raise the limit", hash: "limits" }
      : { kind: "note", label: "Ask an admin to raise it" };
  }
  return canManage
    ? { kind: "link", label: "Top up", hash: "top-up" }
    : { kind: "note", label: "Ask an admin to top up credits" };
}

/**
 * The call to action under a reply that stopped for credits or a limit, for the chat to render.
 * A link to the billing page opens its top-up dialog (`#top-up`) or focuses its limits form
 * (`#limits`).
 */
export function StopAction({ code, canManage }: { code: StopCode; canManage: boolean }) {
  const action = stopAction(code, canManage);
  if (action.kind === "note") {
    return <span className="text-muted-foreground text-sm">{action.label}</span>;
  }
  return (
    <Link
      to="/billing"
      hash={action.hash}
      className={buttonVariants({
        variant: action.hash === "top-up" ? "primary" : "secondary",
        size: "sm",
      })}
    >
      {action.label}
    </Link>
  );
}

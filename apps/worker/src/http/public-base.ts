import { AppError } from "@parley/shared";
import type { Context } from "hono";
import { config } from "../env.ts";
import type { AppEnv } from "./context.ts";

/**
 * The origin links the platform hands out point at (Checkout's return, the portal's, invitation
 * links): PUBLIC_URL. The request's own origin is used only when PUBLIC_URL is empty and the Worker
 * was reached on a loopback host (`pnpm dev` on 127.0.0.1): that origin comes from the Host header,
 * which any client sets, so with `Host: evil.example` a link (and the secret in it) would point at
 * evil.example. A loopback host can only point back at the person's own machine. Anywhere else an
 * empty PUBLIC_URL is a deployment mistake: answered 500 (`what` says what needs it) before
 * anything is created, rather than guessed from the request.
 */
export function publicBase(c: Context<AppEnv>, what: string): string {
  const configured = config(c.env).publicUrl;
  if (configured) return configured.replace(/\/+$/, "");
  const url = new URL(c.req.url);
  const host = url.hostname;
  const loopback = host === "localhost" || host === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(host);
  if (!loopback) {
    throw new AppError(
      "internal",
      `${what} is not configured on this server (PUBLIC_URL is not set)`,
    );
  }
  return url.origin;
}

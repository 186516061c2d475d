import { Outlet, useRouterState } from "@tanstack/react-router";
import { useOrgLeaving, useOrgRemovalNotice } from "../lib/org-removal.ts";
import { Shell } from "./shell.tsx";
import { Loading } from "./ui/states.tsx";

/**
 * The shell around a signed-in screen. While another screen loads, the one still shown takes no
 * input: a message typed into the old screen's chat would go to that chat, not the one the person
 * just opened.
 */
export default function SignedIn() {
  useOrgRemovalNotice();
  const leaving = useOrgLeaving();
  const changingPage = useRouterState({
    select: (state) =>
      state.status === "pending" &&
      state.resolvedLocation !== undefined &&
      state.location.pathname !== state.resolvedLocation.pathname,
  });
  return (
    <Shell inert={changingPage || leaving !== null}>
      {/* Removed from the org this screen is of: nothing of it stays while they are sent on. */}
      {leaving ? (
        <div className="mx-auto w-full max-w-6xl px-4 py-8 sm:px-6">
          <Loading />
        </div>
      ) : (
        <Outlet />
      )}
    </Shell>
  );
}

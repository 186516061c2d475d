import type { Me } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { useState } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { OrgSwitcher } from "../components/shell-menus.tsx";
import AppPage from "../features/developers/app-page.tsx";
import { developersApi } from "../features/developers/developers-api.ts";
import { APP } from "../features/developers/fixtures.ts";
import { renderInApp } from "../test/render.tsx";
import { api } from "./api.ts";
import { useResourceOrg } from "./resource-org.ts";
import { ORG_KEY, SessionProvider, useSession } from "./session.tsx";

// The app page's panels ask for more than this test is about: what the header says.
vi.mock("@tanstack/react-router", async (original) => ({
  ...(await original<typeof import("@tanstack/react-router")>()),
  useParams: () => ({ appId: APP.id }),
}));
vi.mock("../features/developers/app-settings.tsx", () => ({ AppSettings: () => null }));
vi.mock("../features/developers/verification-card.tsx", () => ({ VerificationCard: () => null }));
vi.mock("../features/developers/embed-snippet.tsx", () => ({ EmbedSnippet: () => null }));
vi.mock("../features/developers/app-preview.tsx", () => ({ AppPreview: () => null }));
vi.mock("../features/developers/end-users.tsx", () => ({ EndUsers: () => null }));

const ME: Me = {
  id: "usr_1",
  email: "sam@example.com",
  name: "Sam",
  createdAt: "2026-12-01T00:00:00.000Z",
  emailVerified: true,
  signupGrantWaits: false,
  orgs: [
    { id: "org_a", name: "SaaSCo", role: "owner", createdAt: "2026-12-01T00:00:00.000Z" },
    { id: "org_b", name: "SaaSCo Labs", role: "member", createdAt: "2026-12-02T00:00:00.000Z" },
  ],
};

/** The header's switcher names the org the person works in (its accessible name). */
const header = () => screen.getByRole("button", { name: /^Organization:/ });

beforeEach(() => {
  vi.spyOn(api, "hasToken").mockReturnValue(true);
  vi.spyOn(api, "me").mockResolvedValue(ME);
  // The person switched to org B before following a link to something of org A.
  localStorage.setItem(ORG_KEY, "org_b");
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  localStorage.clear();
});

/** A page showing a resource of `org_a`, then (on click) one of an org the person is not in. */
function Shown() {
  const [orgId, setOrgId] = useState("org_a");
  useResourceOrg(orgId);
  const { org, selectOrg } = useSession();
  return (
    <>
      <p>working in {org?.name ?? "…"}</p>
      <button type="button" onClick={() => selectOrg("org_b")}>
        pick B
      </button>
      <button type="button" onClick={() => setOrgId("org_elsewhere")}>
        show another org's
      </button>
    </>
  );
}

describe("the header follows the org of the resource a page shows", () => {
  it("an app of org A opened while working in org B switches the header to A", async () => {
    vi.spyOn(developersApi, "app").mockResolvedValue({ ...APP, orgId: "org_a" });
    await renderInApp(
      <SessionProvider>
        <OrgSwitcher />
        <AppPage />
      </SessionProvider>,
    );
    expect(await screen.findByText(APP.name)).toBeTruthy();
    // In org B the person is a member, but the app is A's, where they own it: it is shown, under A.
    await waitFor(() => expect(header().textContent).toBe("Organization: SaaSCo"));
    expect(localStorage.getItem(ORG_KEY)).toBe("org_a");
    expect(screen.queryByText(/Only the org's owners and admins/)).toBeNull();
  });

  it("an app the API refuses (a member of its org) says who manages apps", async () => {
    const { ApiError } = await import("./api.ts");
    vi.spyOn(developersApi, "app").mockRejectedValue(
      new ApiError("forbidden", "Requires the admin role", 403),
    );
    await renderInApp(
      <SessionProvider>
        <AppPage />
      </SessionProvider>,
    );
    expect(await screen.findByText(/Only the org's owners and admins/)).toBeTruthy();
  });

  it("switches once per resource org: a switch the person makes afterwards holds", async () => {
    await renderInApp(
      <SessionProvider>
        <Shown />
      </SessionProvider>,
    );
    expect(await screen.findByText("working in SaaSCo")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "pick B" }));
    expect(await screen.findByText("working in SaaSCo Labs")).toBeTruthy();
    // An org the person is not in changes nothing (the API answers its resources 404).
    fireEvent.click(screen.getByRole("button", { name: "show another org's" }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(screen.getByText("working in SaaSCo Labs")).toBeTruthy();
  });
});

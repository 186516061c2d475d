import type { AssistantProfile, Project } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { developersApi } from "./developers-api.ts";
import { APP } from "./fixtures.ts";
import { NewAppDialog } from "./new-app-dialog.tsx";

beforeEach(() => {
  vi.spyOn(orgsApi, "projects").mockResolvedValue({
    items: [{ id: "prj_1", name: "Support" } as Project, { id: "prj_2", name: "Docs" } as Project],
    nextCursor: null,
  });
  vi.spyOn(assistantsApi, "profiles").mockResolvedValue({
    items: [{ id: "apf_1", name: "Shop helper" } as AssistantProfile],
    nextCursor: null,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

async function openDialog() {
  await renderInApp(<NewAppDialog orgId="org_1" />);
  fireEvent.click(screen.getByRole("button", { name: "New app" }));
  const dialog = await screen.findByRole("dialog", { name: "New app" });
  await within(dialog).findByRole("checkbox", { name: "Support" });
  const type = (label: string | RegExp, value: string) =>
    fireEvent.change(within(dialog).getByLabelText(label), { target: { value } });
  type("Name", "Acme Shop");
  type("Issuer (iss)", "https://shop.example.com");
  fireEvent.click(within(dialog).getByRole("checkbox", { name: "Support" }));
  return { dialog, type };
}

describe("NewAppDialog", () => {
  it("refuses an origin the API would refuse, under the origins, without sending", async () => {
    const create = vi.spyOn(developersApi, "createApp");
    const { dialog, type } = await openDialog();
    type("Allowed origins", "https://shop.example.com\nhttps://shop.example.com/checkout");
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    const origins = within(dialog).getByLabelText("Allowed origins");
    await waitFor(() => expect(origins.getAttribute("aria-invalid")).toBe("true"));
    const problem = document.getElementById(origins.getAttribute("aria-describedby") ?? "");
    expect(problem?.textContent).toBe(
      "Line 2: must be only scheme, host and port, as a browser sends it (https://shop.example.com)",
    );
    expect(within(dialog).getByRole("alert").textContent).toContain("allowed origin on line 2");
    expect(create).not.toHaveBeenCalled();
  });

  it("shows the API's refusal under the field it names (a JWKS URL on a private host)", async () => {
    vi.spyOn(developersApi, "createApp").mockRejectedValue(
      new ApiError(
        "invalid_request",
        "verification.url: must be https on a public host",
        400,
        "verification.url",
      ),
    );
    const { dialog, type } = await openDialog();
    fireEvent.click(within(dialog).getByRole("radio", { name: /Your JWKS URL/ }));
    type("JWKS URL", "https://10.0.0.1/jwks.json");
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    const url = within(dialog).getByLabelText("JWKS URL");
    await waitFor(() => expect(url.getAttribute("aria-invalid")).toBe("true"));
    expect(within(dialog).getByText("Must be https on a public host")).toBeTruthy();
  });

  it("sends the app and shows its secret once, with the way to its page", async () => {
    const create = vi.spyOn(developersApi, "createApp").mockResolvedValue({
      ...APP,
      secret: { kid: "kid_1", secret: "prly_as_secret", createdAt: APP.createdAt },
    });
    const { dialog, type } = await openDialog();
    type("Allowed origins", "https://shop.example.com");
    type("Per day", "2.50");
    fireEvent.change(within(dialog).getByLabelText("Assistant profile"), {
      target: { value: "apf_1" },
    });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    await waitFor(() =>
      expect(create).toHaveBeenCalledWith("org_1", {
        name: "Acme Shop",
        allowedOrigins: ["https://shop.example.com"],
        projectIds: ["prj_1"],
        verification: {
          type: "secret",
          issuer: "https://shop.example.com",
          audience: "parley",
          maxTokenLifetimeSeconds: 600,
        },
        endUserDailyLimitMicros: 2_500_000,
        endUserWeeklyLimitMicros: null,
        endUserMonthlyLimitMicros: null,
        showCost: false,
        profileId: "apf_1",
      }),
    );
    const ready = await screen.findByRole("dialog", { name: "Acme Shop is ready" });
    expect(within(ready).getByText("prly_as_secret")).toBeTruthy();
    expect(within(ready).getByRole("link", { name: "Open Acme Shop" }).getAttribute("href")).toBe(
      `/developers/apps/${APP.id}`,
    );
  });
});

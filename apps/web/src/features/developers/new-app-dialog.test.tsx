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
      "Line 2: must be only scheme, host and port, as a browser sends it (https://shop.example.com).",
    );
    // Said at its field, where it is fixed, and focused there; the alert is for the rest.
    expect(document.activeElement).toBe(origins);
    expect(within(dialog).queryByRole("alert")).toBeNull();
    expect(create).not.toHaveBeenCalled();
  });

  it("shows every problem of the form at once, each under its field, without sending", async () => {
    const create = vi.spyOn(developersApi, "createApp");
    const { dialog, type } = await openDialog();
    type("Name", "");
    type("Allowed origins", "https://shop.example.com/a\nhttps://ok.example.com\nftp://x");
    fireEvent.click(within(dialog).getByRole("checkbox", { name: "Support" }));
    type("Per day", "lots");
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    const invalid = (label: string) =>
      within(dialog).getByLabelText(label).getAttribute("aria-invalid");
    await waitFor(() => expect(invalid("Name")).toBe("true"));
    expect(invalid("Allowed origins")).toBe("true");
    expect(invalid("Per day")).toBe("true");
    const said = (label: string) => {
      const control = within(dialog).getByLabelText(label);
      return document.getElementById(control.getAttribute("aria-describedby") ?? "")?.textContent;
    };
    expect(said("Name")).toBe("Is required.");
    expect(said("Allowed origins")).toMatch(/^Line 1: .*Line 3: .*\.$/);
    expect(said("Per day")).toMatch(/^Must be an amount.*\.$/);
    const projects = within(dialog).getByRole("group", { name: "Projects its end users chat in" });
    expect(projects.getAttribute("aria-invalid")).toBe("true");
    expect(within(projects).getByText(/^Check at least one project/)).toBeTruthy();
    // Every problem is at its field: nothing is left for the form's alert.
    expect(within(dialog).queryByRole("alert")).toBeNull();
    expect(create).not.toHaveBeenCalled();
  });

  it("shows every problem the API names at once (its issues), each under its field", async () => {
    vi.spyOn(developersApi, "createApp").mockRejectedValue(
      new ApiError("invalid_request", "name: already taken", 400, "name", [
        { field: "name", message: "name: already taken" },
        { field: "verification.url", message: "verification.url: must be https on a public host" },
      ]),
    );
    const { dialog, type } = await openDialog();
    fireEvent.click(within(dialog).getByRole("radio", { name: /Your JWKS URL/ }));
    type("JWKS URL", "https://10.0.0.1/jwks.json");
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    const url = within(dialog).getByLabelText("JWKS URL");
    await waitFor(() => expect(url.getAttribute("aria-invalid")).toBe("true"));
    expect(within(dialog).getByLabelText("Name").getAttribute("aria-invalid")).toBe("true");
    expect(within(dialog).getByText("Already taken.")).toBeTruthy();
    expect(within(dialog).getByText("Must be https on a public host.")).toBeTruthy();
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
    expect(within(dialog).getByText("Must be https on a public host.")).toBeTruthy();
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

  it("checks the org's only project, keeps an app on API keys creatable with the defaults, and says what a project is for", async () => {
    vi.spyOn(orgsApi, "projects").mockResolvedValue({
      items: [{ id: "prj_only", name: "Support" } as Project],
      nextCursor: null,
    });
    const create = vi.spyOn(developersApi, "createApp").mockResolvedValue({ ...APP });
    await renderInApp(<NewAppDialog orgId="org_1" />);
    fireEvent.click(screen.getByRole("button", { name: "New app" }));
    const dialog = await screen.findByRole("dialog", { name: "New app" });
    const only = await within(dialog).findByRole("checkbox", { name: "Support" });
    await waitFor(() => expect((only as HTMLInputElement).checked).toBe(true));
    // The verification is explained, and its defaults are enough for an app on API keys.
    expect(dialog.textContent).toContain("Only for end-user tokens your server signs itself");
    expect((within(dialog).getByLabelText("Issuer (iss)") as HTMLInputElement).value).toBe(
      "my-server",
    );
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "Acme Shop" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    await waitFor(() =>
      expect(create).toHaveBeenCalledWith(
        "org_1",
        expect.objectContaining({
          projectIds: ["prj_only"],
          verification: expect.objectContaining({ issuer: "my-server", audience: "parley" }),
        }),
      ),
    );
  });

  it("says in plain words that a project is needed when none is checked", async () => {
    const create = vi.spyOn(developersApi, "createApp");
    await renderInApp(<NewAppDialog orgId="org_1" />);
    fireEvent.click(screen.getByRole("button", { name: "New app" }));
    const dialog = await screen.findByRole("dialog", { name: "New app" });
    await within(dialog).findByRole("checkbox", { name: "Support" });
    fireEvent.change(within(dialog).getByLabelText("Name"), { target: { value: "Acme Shop" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Create app" }));
    const projects = within(dialog).getByRole("group", { name: "Projects its end users chat in" });
    await waitFor(() => expect(projects.getAttribute("aria-invalid")).toBe("true"));
    expect(
      document.getElementById(projects.getAttribute("aria-describedby") ?? "")?.textContent,
    ).toBe("Check at least one project: your end users' chats are kept, and billed, in a project.");
    expect(create).not.toHaveBeenCalled();
  });
});

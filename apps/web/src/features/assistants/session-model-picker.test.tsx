import type { OrgSummary } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { toast } from "sonner";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { DEV, FAST, LARGE, profileOf, project, sessionOf } from "./fixtures.ts";
import { SessionModelPicker } from "./session-model-picker.tsx";

const me = vi.hoisted(() => ({ id: "u1" }));

vi.mock("../../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: me.id, email: "olive@example.com", name: "Olive", createdAt: "x", orgs: [] },
    org: { id: "org_1", name: "Acme", role: "member", createdAt: "x" } as OrgSummary,
  }),
}));

beforeEach(() => {
  me.id = "u1";
  vi.spyOn(assistantsApi, "allowedModels").mockResolvedValue({
    orgId: "org_1",
    items: [DEV, FAST],
    chosen: true,
  });
  vi.spyOn(assistantsApi, "catalogue").mockResolvedValue({
    items: [DEV, FAST, LARGE],
    defaultModel: "parley/dev",
  });
  vi.spyOn(orgsApi, "project").mockResolvedValue(project);
  vi.spyOn(assistantsApi, "profile").mockResolvedValue(profileOf({ model: "parley/dev" }));
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

/** Opens the picker with the keyboard, as a person without a mouse would. */
async function openPicker(name: RegExp) {
  const trigger = await screen.findByRole("combobox", { name });
  await waitFor(() => expect((trigger as HTMLButtonElement).disabled).toBe(false));
  fireEvent.keyDown(trigger, { key: "Enter" });
  return screen.findByRole("listbox");
}

describe("SessionModelPicker", () => {
  it("says which models the local dev model answers (offline), beside their prices", async () => {
    vi.spyOn(assistantsApi, "allowedModels").mockResolvedValue({
      orgId: "org_1",
      items: [DEV, { ...FAST, servedLocally: true }],
      chosen: true,
    });
    await renderInApp(<SessionModelPicker session={sessionOf({ model: "parley/dev-fast" })} />);
    const list = await openPicker(/^Model: Parley Dev Fast$/);
    const options = within(list).getAllByRole("option");
    expect(options.map((option) => option.textContent).slice(1)).toEqual([
      "Parley Dev Model$1.20 in · $2.40 out per 1M tokens · 128K context",
      "Parley Dev Fast$0.12 in · $0.48 out per 1M tokens · 128K context · answered by the local dev model",
    ]);
  });

  it("names the session's model and lists the allowed ones with prices per million tokens", async () => {
    await renderInApp(<SessionModelPicker session={sessionOf({ model: "parley/dev-fast" })} />);
    const list = await openPicker(/^Model: Parley Dev Fast$/);
    const options = within(list).getAllByRole("option");
    expect(options.map((option) => option.textContent)).toEqual([
      "Default (Parley Dev Model)The “Support” profile's model · $1.20 in · $2.40 out per 1M tokens · 128K context",
      "Parley Dev Model$1.20 in · $2.40 out per 1M tokens · 128K context",
      "Parley Dev Fast$0.12 in · $0.48 out per 1M tokens · 128K context",
    ]);
    expect(
      within(list)
        .getByRole("option", { name: /^Parley Dev Fast/ })
        .getAttribute("aria-selected"),
    ).toBe("true");
  });

  it("sets the pick for the session, and goes back to the profile's with Default", async () => {
    const pick = vi
      .spyOn(assistantsApi, "setSessionModel")
      .mockImplementation(async (_id, model) => sessionOf({ model }));
    await renderInApp(<SessionModelPicker session={sessionOf()} />);
    let list = await openPicker(/^Model: Parley Dev Model$/);
    fireEvent.keyDown(within(list).getByRole("option", { name: /^Parley Dev Fast/ }), {
      key: "Enter",
    });
    await waitFor(() => expect(pick).toHaveBeenCalledWith("ses_1", "parley/dev-fast"));

    cleanup();
    await renderInApp(<SessionModelPicker session={sessionOf({ model: "parley/dev-fast" })} />);
    list = await openPicker(/^Model: Parley Dev Fast$/);
    fireEvent.keyDown(within(list).getByRole("option", { name: /^Default/ }), { key: "Enter" });
    await waitFor(() => expect(pick).toHaveBeenLastCalledWith("ses_1", null));
  });

  it("marks a pick the org no longer allows, so the member picks another", async () => {
    await renderInApp(<SessionModelPicker session={sessionOf({ model: "parley/dev-large" })} />);
    const list = await openPicker(/^Model: Parley Dev Large \(no longer allowed: pick another\)$/);
    const stale = within(list).getByRole("option", { name: /^Parley Dev Large/ });
    expect(stale.getAttribute("aria-disabled")).toBe("true");
    expect(stale.textContent).toContain("No longer allowed in your organization");
  });

  it("keeps the session's model when the API refuses the pick, and says why", async () => {
    vi.spyOn(assistantsApi, "setSessionModel").mockRejectedValue(
      new ApiError(
        "invalid_request",
        "model: parley/dev-fast is not allowed in this organization",
        400,
        "model",
      ),
    );
    const said = vi.spyOn(toast, "error");
    await renderInApp(<SessionModelPicker session={sessionOf()} />);
    const list = await openPicker(/^Model: Parley Dev Model$/);
    fireEvent.keyDown(within(list).getByRole("option", { name: /^Parley Dev Fast/ }), {
      key: "Enter",
    });
    await waitFor(() =>
      expect(said).toHaveBeenCalledWith("Parley Dev Fast is not allowed in this organization."),
    );
    expect(screen.getByRole("combobox", { name: /^Model: Parley Dev Model$/ })).toBeTruthy();
  });

  it("shows someone else's session's model without a picker (only the owner picks)", async () => {
    me.id = "u2";
    await renderInApp(<SessionModelPicker session={sessionOf({ model: "parley/dev-fast" })} />);
    expect(await screen.findByText("Parley Dev Fast")).toBeTruthy();
    expect(screen.queryByRole("combobox")).toBeNull();
  });
});

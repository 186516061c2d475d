import { createOrgSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { orgsApi } from "../../lib/orgs-api.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { NewOrgForm } from "./new-org-form.tsx";

const session = vi.hoisted(() => ({ selectOrg: vi.fn(), reload: vi.fn(async () => {}) }));
vi.mock("../../lib/session.tsx", () => ({ useSession: () => session }));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  session.selectOrg.mockClear();
  session.reload.mockClear();
});

describe("NewOrgForm", () => {
  it("creates the organization, switches to it and reloads who the user is", async () => {
    const create = vi.spyOn(orgsApi, "createOrg").mockResolvedValue({
      id: "org_new",
      name: "Difference Engines",
      role: "owner",
      createdAt: "2026-11-29T00:00:00.000Z",
    });
    const { router } = await renderInApp(<NewOrgForm />, { path: "/orgs/new" });
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "  Difference Engines " } });
    fireEvent.click(screen.getByRole("button", { name: "Create organization" }));
    await waitFor(() => expect(session.reload).toHaveBeenCalled());
    expect(create).toHaveBeenCalledWith("Difference Engines");
    expect(session.selectOrg).toHaveBeenCalledWith("org_new");
    await waitFor(() => expect(router.state.location.pathname).toBe("/projects"));
  });

  it("shows the server's refusal on the field and switches nowhere", async () => {
    answerEvery(400, refusedBody(createOrgSchema, { name: "Engines\tLtd" }));
    await renderInApp(<NewOrgForm />);
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "Engines\tLtd" } });
    fireEvent.click(screen.getByRole("button", { name: "Create organization" }));
    const name = screen.getByLabelText("Name");
    await waitFor(() =>
      expect(describedText(name)).toBe(
        "Must be a single line without control characters (no tabs or line breaks).",
      ),
    );
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByRole("alert")).toBeNull();
    expect(session.selectOrg).not.toHaveBeenCalled();
    expect(screen.getByRole("button", { name: "Create organization" })).not.toHaveProperty(
      "disabled",
      true,
    );
  });
});

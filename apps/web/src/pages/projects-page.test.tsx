import { createProjectSchema, type Project } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../lib/api.ts";
import { orgsApi } from "../lib/orgs-api.ts";
import { answerEvery, describedText, refusedBody } from "../test/refusal.ts";
import { renderInApp } from "../test/render.tsx";
import ProjectsPage from "./projects-page.tsx";

vi.mock("../lib/session.tsx", () => ({
  useSession: () => ({ org: { id: "org_1", name: "Acme", role: "owner", createdAt: "x" } }),
}));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const project = (n: number): Project => ({
  id: `project_${n}`,
  orgId: "org_1",
  defaultProfileId: null,
  previewProfileId: null,
  name: `Project ${n}`,
  memory: {},
  createdBy: "u1",
  createdAt: "2026-11-29T00:00:00.000Z",
  updatedAt: "2026-11-29T00:00:00.000Z",
});

describe("ProjectsPage paging", () => {
  it("loads the next page under the first until the list ends, and shows a page that failed", async () => {
    const projects = vi
      .spyOn(orgsApi, "projects")
      .mockResolvedValueOnce({ items: [project(1), project(2)], nextCursor: "c2" })
      .mockRejectedValueOnce(new ApiError("internal", "The server failed", 500))
      .mockResolvedValueOnce({ items: [project(3)], nextCursor: null });
    await renderInApp(<ProjectsPage />, { path: "/projects" });
    await screen.findByText("Project 2");
    fireEvent.click(screen.getByRole("button", { name: "More projects" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/server failed/);
    fireEvent.click(screen.getByRole("button", { name: "More projects" }));
    await screen.findByText("Project 3");
    expect(screen.getByText("Project 1")).toBeTruthy();
    expect(screen.queryByRole("button", { name: "More projects" })).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(projects.mock.calls).toEqual([
      ["org_1", undefined],
      ["org_1", "c2"],
      ["org_1", "c2"],
    ]);
  });
});

describe("the new project form", () => {
  it("shows the name's problem at the name and what has no field in the alert", async () => {
    vi.spyOn(orgsApi, "projects").mockResolvedValue({ items: [], nextCursor: null });
    const refused = refusedBody(createProjectSchema, { name: "\u0301Docs" });
    // A second problem the form has no field for goes to its alert, worded as a sentence.
    answerEvery(400, {
      error: {
        ...refused.error,
        issues: [
          { field: "name", message: refused.error.message.replace(/^name: /, "") },
          { field: "memory", message: "must be at most 16384 bytes of JSON" },
        ],
      },
    });
    await renderInApp(<ProjectsPage />, { path: "/projects" });
    const form = await screen.findByRole("form", { name: "New project" });
    const name = within(form).getByLabelText("Name");
    fireEvent.change(name, { target: { value: "\u0301Docs" } });
    fireEvent.click(within(form).getByRole("button", { name: "Create project" }));
    await waitFor(() => expect(describedText(name)).toBe("Must not start with a combining mark."));
    expect(name.getAttribute("aria-invalid")).toBe("true");
    expect((await within(form).findByRole("alert")).textContent).toBe(
      "The memory must be at most 16384 bytes of JSON.",
    );
  });
});

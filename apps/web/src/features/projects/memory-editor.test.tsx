import type { Project } from "@parley/shared";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { answerEvery } from "../../test/refusal.ts";
import { MemoryEditor } from "./memory-editor.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const project: Project = {
  id: "prj_1",
  orgId: "org_1",
  defaultProfileId: null,
  previewProfileId: null,
  name: "Launch plan",
  memory: { audience: "founders" },
  createdBy: "u1",
  createdAt: "2026-11-29T00:00:00.000Z",
  updatedAt: "2026-11-29T00:00:00.000Z",
};

const editor = () => screen.getByLabelText(/Memory \(JSON/) as HTMLTextAreaElement;
/** Renders the editor switched to JSON (a flat memory opens as a list of facts). */
function renderJson(onSaved: (project: Project) => void = () => {}) {
  render(<MemoryEditor project={project} onSaved={onSaved} />);
  fireEvent.click(screen.getByRole("button", { name: "Edit as JSON" }));
}

describe("MemoryEditor", () => {
  it("does not send invalid JSON and says why", async () => {
    const update = vi.spyOn(orgsApi, "updateProject");
    renderJson();
    fireEvent.change(editor(), { target: { value: '{"audience": ' } });
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/Not valid JSON/);
    expect(editor().getAttribute("aria-invalid")).toBe("true");
    expect(update).not.toHaveBeenCalled();
  });

  it("saves a valid memory and reports it", async () => {
    const onSaved = vi.fn();
    const update = vi
      .spyOn(orgsApi, "updateProject")
      .mockImplementation(async (_id, input) => ({ ...project, memory: input.memory ?? {} }));
    renderJson(onSaved);
    fireEvent.change(editor(), { target: { value: '{"audience": "teams"}' } });
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    expect((await screen.findByRole("status")).textContent).toBe("Memory saved.");
    expect(update).toHaveBeenCalledWith("prj_1", { memory: { audience: "teams" } });
    expect(onSaved).toHaveBeenCalledOnce();
  });

  it("explains payload_too_large from the server", async () => {
    vi.spyOn(orgsApi, "updateProject").mockRejectedValue(
      new ApiError("payload_too_large", "memory: at most 16384 bytes", 413, "memory"),
    );
    render(<MemoryEditor project={project} onSaved={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        "Memory is too large to save: at most 16384 bytes.",
      ),
    );
  });

  it("edits a flat memory as named facts: change, add, remove, and refuses a name given twice", async () => {
    const update = vi
      .spyOn(orgsApi, "updateProject")
      .mockImplementation(async (_id, input) => ({ ...project, memory: input.memory ?? {} }));
    render(<MemoryEditor project={project} onSaved={() => {}} />);
    expect((screen.getByLabelText("Name of fact 1") as HTMLInputElement).value).toBe("audience");
    fireEvent.change(screen.getByLabelText("Value of fact 1"), { target: { value: "teams" } });
    fireEvent.click(screen.getByRole("button", { name: "Add a fact" }));
    fireEvent.change(screen.getByLabelText("Name of fact 2"), { target: { value: "audience" } });
    fireEvent.change(screen.getByLabelText("Value of fact 2"), { target: { value: "formal" } });
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    expect((await screen.findByRole("alert")).textContent).toBe('"audience" is named twice.');
    expect(update).not.toHaveBeenCalled();
    fireEvent.change(screen.getByLabelText("Name of fact 2"), { target: { value: "tone" } });
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    await waitFor(() =>
      expect(update).toHaveBeenCalledWith("prj_1", {
        memory: { audience: "teams", tone: "formal" },
      }),
    );
    fireEvent.click(screen.getByRole("button", { name: "Remove fact 1 (audience)" }));
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    await waitFor(() =>
      expect(update).toHaveBeenLastCalledWith("prj_1", { memory: { tone: "formal" } }),
    );
  });

  it("says every problem of the API's refusal of the memory, where each is", async () => {
    answerEvery(400, {
      error: {
        code: "invalid_request",
        message: "memory.tone: must not contain NUL characters (U+0000)",
        field: "memory.tone",
        issues: [
          { field: "memory.tone", message: "must not contain NUL characters (U+0000)" },
          { field: "memory.plans.team", message: "Too big: expected number to be <=100" },
        ],
      },
    });
    renderJson();
    fireEvent.change(editor(), { target: { value: '{"tone": "calm", "plans": {"team": 5}}' } });
    fireEvent.click(screen.getByRole("button", { name: "Save memory" }));
    await waitFor(() =>
      expect(screen.getByRole("alert").textContent).toBe(
        "Memory is not accepted at tone: must not contain NUL characters (U+0000). Memory is not accepted at plans.team: must be at most 100.",
      ),
    );
    expect(editor().getAttribute("aria-invalid")).toBe("true");
  });

  it("opens a nested memory as JSON and keeps it there", () => {
    render(
      <MemoryEditor
        project={{ ...project, memory: { audience: "founders", plans: { team: 5 } } }}
        onSaved={() => {}}
      />,
    );
    expect(JSON.parse(editor().value)).toEqual({ audience: "founders", plans: { team: 5 } });
    fireEvent.click(screen.getByRole("button", { name: "Edit as a list" }));
    expect(screen.getByRole("alert").textContent).toMatch(/nested values/);
    expect(screen.queryByLabelText("Name of fact 1")).toBeNull();
  });
});

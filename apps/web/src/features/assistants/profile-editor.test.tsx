import { MAX_INSTRUCTIONS_BYTES } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { toolsApi } from "../../lib/tools-api.ts";
import { answerEvery } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { DEV, FAST, LARGE, profileOf, project, versionOf } from "./fixtures.ts";
import { ProfileEditor } from "./profile-editor.tsx";

const models = [DEV, FAST, LARGE];

beforeEach(() => {
  vi.spyOn(toolsApi, "sources").mockResolvedValue({ items: [], nextCursor: null });
  vi.spyOn(assistantsApi, "promptPreview").mockResolvedValue({
    profileId: "apf_1",
    version: 3,
    projectId: "prj_1",
    audience: "member",
    model: "parley/dev",
    system:
      "You are Parley's in-app assistant.\n<organization_instructions>\nBe kind.\n</organization_instructions>\n\nRules that always hold",
    tokens: 30,
  });
  vi.spyOn(assistantsApi, "versions").mockResolvedValue({
    items: [
      versionOf(3, {
        instructions: "Be kind.\nBe thorough.\nAnswer in English.",
        model: "parley/dev",
        knowledgeRetrieval: true,
      }),
      versionOf(2, {
        authorLabel: "Ada Admin",
        instructions: "Be kind.\nBe brief.\nAnswer in English.",
        model: "parley/dev-fast",
        temperature: 0.3,
      }),
      versionOf(1, { authorLabel: "Erased member" }),
    ],
    nextCursor: null,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

function renderEditor(overrides: Parameters<typeof profileOf>[0] = {}, canManage = true) {
  const profile = profileOf({
    instructions: "Be kind.\nBe thorough.\nAnswer in English.",
    ...overrides,
  });
  return renderInApp(
    <ProfileEditor
      profile={profile}
      models={models}
      names={models}
      projects={[project]}
      canManage={canManage}
    />,
  );
}

const instructions = () => screen.getByLabelText("Instructions") as HTMLTextAreaElement;
const save = () => screen.getByRole("button", { name: /^Save as version/ });

describe("ProfileEditor: validation", () => {
  it("says at once why instructions are refused, and removes the refused characters on request", async () => {
    const update = vi.spyOn(assistantsApi, "updateProfile");
    await renderEditor();
    fireEvent.change(instructions(), { target: { value: "Be kind.\u0007\nBe \u202Ebrief." } });
    const alert = await screen.findByText(
      /control characters other than tab and line feed \(found U\+0007\)/,
    );
    expect(alert.textContent).toMatch(/^Instructions must not contain/);
    expect(instructions().getAttribute("aria-invalid")).toBe("true");
    fireEvent.click(save());
    expect(update).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Remove these characters" }));
    expect(instructions().value).toBe("Be kind.\nBe brief.");
    expect(instructions().getAttribute("aria-invalid")).toBe("false");
  });

  it("counts the 16 KB as UTF-8 bytes while typing and refuses more", async () => {
    const update = vi.spyOn(assistantsApi, "updateProfile");
    await renderEditor();
    fireEvent.change(instructions(), { target: { value: "é".repeat(10) } });
    expect(
      screen.getByText(`20 / ${MAX_INSTRUCTIONS_BYTES.toLocaleString("en-US")} bytes`),
    ).toBeTruthy();
    fireEvent.change(instructions(), { target: { value: "a".repeat(MAX_INSTRUCTIONS_BYTES + 5) } });
    expect(screen.getByText("Instructions are 5 bytes over the 16 KB limit.")).toBeTruthy();
    fireEvent.click(save());
    expect(update).not.toHaveBeenCalled();
  });

  it("holds temperature to the chosen model's range (the API's), and max output to its maximum", async () => {
    const update = vi.spyOn(assistantsApi, "updateProfile");
    await renderEditor({ model: "parley/dev-large" });
    fireEvent.change(screen.getByLabelText("Temperature"), { target: { value: "1.5" } });
    fireEvent.change(screen.getByLabelText("Max output tokens"), { target: { value: "50000" } });
    fireEvent.click(save());
    expect(await screen.findByText("Must be between 0 and 1 for Parley Dev Large.")).toBeTruthy();
    expect(screen.getByText("At most 32,000 for Parley Dev Large.")).toBeTruthy();
    expect(screen.getByText("2 fields need attention.")).toBeTruthy();
    expect(update).not.toHaveBeenCalled();
    // Within range for Dev Model (0 to 2): the same value goes once the model allows it.
    expect(screen.getByText("0 to 1; lower is steadier")).toBeTruthy();
  });

  it("says where to allow more models than the picker offers (Assistants, Models)", async () => {
    await renderEditor();
    const link = screen.getByRole("link", { name: "Allow more under Assistants → Models" });
    expect(link.getAttribute("href")).toBe("/assistants#models");
  });

  it("refuses a seventh suggested prompt and an empty name in the API's words", async () => {
    const update = vi.spyOn(assistantsApi, "updateProfile");
    await renderEditor({ suggestions: ["a", "b", "c", "d", "e", "f"] });
    expect(
      (screen.getByRole("button", { name: "Add a suggested prompt" }) as HTMLButtonElement)
        .disabled,
    ).toBe(true);
    expect(screen.getByText("6 of 6")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "   " } });
    fireEvent.click(save());
    expect(await screen.findByText("Give the profile a name.")).toBeTruthy();
    expect(screen.getByLabelText("Name").getAttribute("aria-invalid")).toBe("true");
    expect(update).not.toHaveBeenCalled();
  });
});

describe("ProfileEditor: saving", () => {
  it("sends only what changed with the version it edits, and shows the new version", async () => {
    const update = vi.spyOn(assistantsApi, "updateProfile").mockImplementation(async (_id, input) =>
      profileOf({
        version: 4,
        instructions: "Be kind.\nBe thorough.\nAnswer in English.",
        ...input,
      }),
    );
    await renderEditor();
    fireEvent.change(screen.getByLabelText("Welcome message"), {
      target: { value: "Hello there" },
    });
    fireEvent.change(screen.getByLabelText("Temperature"), { target: { value: "0.7" } });
    expect(screen.getByText("Unsaved changes")).toBeTruthy();
    fireEvent.click(save());
    await waitFor(() => expect(update).toHaveBeenCalledOnce());
    expect(update).toHaveBeenCalledWith("apf_1", {
      welcome: "Hello there",
      temperature: 0.7,
      baseVersion: 3,
    });
  });

  it("switches knowledge on as a tool, for the API's search_knowledge", async () => {
    const update = vi
      .spyOn(assistantsApi, "updateProfile")
      .mockImplementation(async (_id, input) => profileOf({ version: 4, ...input }));
    await renderEditor();
    fireEvent.click(screen.getByRole("checkbox", { name: /^Search knowledge/ }));
    fireEvent.click(save());
    await waitFor(() => expect(update).toHaveBeenCalledOnce());
    expect(update.mock.calls[0]?.[1].tools).toEqual([
      "read_project_memory",
      "update_project_memory",
      "get_balance",
      "get_session_spend",
      "search_knowledge",
    ]);
  });

  it("switches retrieval before answering on, saved as a new version with only that change", async () => {
    const update = vi
      .spyOn(assistantsApi, "updateProfile")
      .mockImplementation(async (_id, input) => profileOf({ version: 4, ...input }));
    await renderEditor();
    const retrieval = screen.getByRole("checkbox", {
      name: /^Search the documents before answering/,
    }) as HTMLInputElement;
    expect(retrieval.checked).toBe(false);
    fireEvent.click(retrieval);
    expect(screen.getByText("Unsaved changes")).toBeTruthy();
    fireEvent.click(save());
    await waitFor(() => expect(update).toHaveBeenCalledOnce());
    expect(update).toHaveBeenCalledWith("apf_1", { knowledgeRetrieval: true, baseVersion: 3 });
  });

  it("shows the API's refusal under the field it names", async () => {
    vi.spyOn(assistantsApi, "updateProfile").mockRejectedValue(
      new ApiError(
        "invalid_request",
        "model: parley/dev-fast is not allowed in this organization (owners and admins choose its models)",
        400,
        "model",
      ),
    );
    await renderEditor();
    fireEvent.change(screen.getByLabelText("Welcome message"), { target: { value: "Hello" } });
    fireEvent.click(save());
    expect(
      await screen.findByText(
        "Parley Dev Fast is not allowed in this organization (owners and admins choose its models).",
      ),
    ).toBeTruthy();
  });

  it("shows every problem the API names, each under its field", async () => {
    answerEvery(400, {
      error: {
        code: "invalid_request",
        message: "temperature: Too big: expected number to be <=2",
        field: "temperature",
        issues: [
          { field: "temperature", message: "Too big: expected number to be <=2" },
          { field: "welcome", message: "Too big: expected string to have <=1000 characters" },
        ],
      },
    });
    await renderEditor();
    fireEvent.change(screen.getByLabelText("Welcome message"), { target: { value: "Hello" } });
    fireEvent.click(save());
    expect(await screen.findByText("Must be at most 2.")).toBeTruthy();
    expect(screen.getByText("Must be at most 1000 characters.")).toBeTruthy();
    expect(screen.getByLabelText("Welcome message").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByText("2 fields need attention.")).toBeTruthy();
  });

  it("says a concurrent save was refused (409) and keeps the edits", async () => {
    vi.spyOn(assistantsApi, "updateProfile").mockRejectedValue(
      new ApiError(
        "conflict",
        "baseVersion: the profile is at version 4; reload it and make your change again",
        409,
        "baseVersion",
      ),
    );
    await renderEditor();
    fireEvent.change(screen.getByLabelText("Welcome message"), { target: { value: "Hello" } });
    fireEvent.click(save());
    expect((await screen.findByRole("alert")).textContent).toMatch(/at version 4; reload it/);
    expect((screen.getByLabelText("Welcome message") as HTMLTextAreaElement).value).toBe("Hello");
  });

  it("lets a member read the profile with nothing to save or restore", async () => {
    await renderEditor({}, false);
    expect(screen.getByText(/Only owners and admins change profiles/)).toBeTruthy();
    expect(instructions().readOnly).toBe(true);
    expect(screen.queryByRole("button", { name: /^Save as version/ })).toBeNull();
    await screen.findByText("Version 2");
    expect(screen.queryByRole("button", { name: /^Restore version/ })).toBeNull();
    expect(
      screen.getByRole("button", { name: "Compare version 2 with the current version" }),
    ).toBeTruthy();
  });
});

describe("ProfileEditor: versions, diff and rollback", () => {
  it("lists who saved each version and when", async () => {
    await renderEditor();
    const list = await screen.findByRole("list", { name: "Versions" });
    const rows = within(list).getAllByRole("listitem");
    expect(rows).toHaveLength(3);
    expect(rows[0]?.textContent).toMatch(/Version 3Current/);
    expect(rows[1]?.textContent).toMatch(/Ada Admin · Dec 2, 2026/);
    expect(rows[2]?.textContent).toMatch(/Erased member/);
  });

  it("diffs a version against the current one, line by line and setting by setting", async () => {
    await renderEditor();
    fireEvent.click(
      await screen.findByRole("button", { name: "Compare version 2 with the current version" }),
    );
    const dialog = await screen.findByRole("dialog", { name: "Version 2 → version 3 (current)" });
    const instructionsDiff = within(dialog).getByRole("region", {
      name: "Instructions: 1 lines removed, 1 added",
    });
    expect(instructionsDiff.textContent).toContain("Removed: Be brief.");
    expect(instructionsDiff.textContent).toContain("Added: Be thorough.");
    const settings = within(dialog).getByRole("region", { name: "Settings that differ" });
    expect(within(settings).getByRole("row", { name: /Model/ }).textContent).toBe(
      "ModelParley Dev FastParley Dev Model",
    );
    expect(within(settings).getByRole("row", { name: /Temperature/ }).textContent).toBe(
      "Temperature0.3Default",
    );
    expect(within(settings).getByRole("row", { name: /Search the documents/ }).textContent).toBe(
      "Search the documents before answeringOffOn",
    );
    // Any version: switching the comparison to version 1 (the same text as version 2 here).
    fireEvent.change(within(dialog).getByLabelText("Compare the current version with"), {
      target: { value: "1" },
    });
    expect(
      await screen.findByRole("dialog", { name: "Version 1 → version 3 (current)" }),
    ).toBeTruthy();
  });

  it("restores an earlier version only after a confirmation", async () => {
    const rollback = vi
      .spyOn(assistantsApi, "rollback")
      .mockResolvedValue(profileOf({ version: 4, model: "parley/dev-fast" }));
    await renderEditor();
    fireEvent.click(await screen.findByRole("button", { name: "Restore version 2" }));
    const confirm = await screen.findByRole("alertdialog", { name: "Restore version 2?" });
    expect(confirm.textContent).toMatch(/as a new version 4/);
    fireEvent.click(within(confirm).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(rollback).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Restore version 2" }));
    const again = await screen.findByRole("alertdialog", { name: "Restore version 2?" });
    fireEvent.click(within(again).getByRole("button", { name: "Restore version 2" }));
    await waitFor(() => expect(rollback).toHaveBeenCalledWith("apf_1", 2));
  });

  it("shows the whole prompt with the instructions marked inside Parley's frame", async () => {
    await renderEditor();
    const mark = await screen.findByText("Be kind.", { selector: "mark" });
    expect(mark.closest("pre")?.textContent).toMatch(/^You are Parley's in-app assistant/);
    expect(screen.getByText("About 30 tokens")).toBeTruthy();
    expect(assistantsApi.promptPreview).toHaveBeenCalledWith("apf_1", {
      projectId: "prj_1",
      audience: "member",
      version: 3,
    });
  });
});

import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { assistantsApi } from "../../lib/assistants-api.ts";
import { answerEvery } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { AllowedModels } from "./allowed-models.tsx";
import { DEV, FAST, LARGE } from "./fixtures.ts";

const wide = vi.hoisted(() => ({ value: true }));
vi.mock("../../lib/use-media-query.ts", () => ({ useMediaQuery: () => wide.value }));

beforeEach(() => {
  wide.value = true;
  vi.spyOn(assistantsApi, "catalogue").mockResolvedValue({
    items: [DEV, FAST, LARGE],
    defaultModel: "parley/dev",
  });
  vi.spyOn(assistantsApi, "allowedModels").mockResolvedValue({
    orgId: "org_1",
    items: [DEV, LARGE],
    chosen: true,
  });
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const box = (name: string) => screen.getByRole("checkbox", { name }) as HTMLInputElement;

describe("AllowedModels (owners and admins)", () => {
  it("lists the catalogue with its prices per million tokens, the allowed ones checked, the default marked", async () => {
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    expect(box("Parley Dev Model").checked).toBe(true);
    expect(box("Parley Dev Fast").checked).toBe(false);
    expect(box("Parley Dev Large").checked).toBe(true);
    const row = (name: string) => screen.getByRole("checkbox", { name }).closest("tr");
    expect(row("Parley Dev Fast")?.textContent).toBe(
      "Parley Dev Fastparley/dev-fastFree preview$0.12$0.48$0.03 / $0.15128KTools",
    );
    expect(row("Parley Dev Large")?.textContent).toBe(
      "Parley Dev Largeparley/dev-large$3.60$18.00$0.36 / $4.50200KTools, reasoning",
    );
    expect(
      within(row("Parley Dev Model") as HTMLElement).getByText("Platform default"),
    ).toBeTruthy();
    expect(screen.getByText("2 of 3 allowed")).toBeTruthy();
  });

  it("marks a model the local dev model answers (offline), so its name does not pass for the real one", async () => {
    const mini = {
      ...DEV,
      id: "openai/gpt-4o-mini",
      displayName: "OpenAI: GPT-4o-mini",
      freePreview: false,
      servedLocally: true,
    };
    vi.spyOn(assistantsApi, "catalogue").mockResolvedValue({
      items: [DEV, mini],
      defaultModel: "parley/dev",
    });
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    const row = (name: string) =>
      screen.getByRole("checkbox", { name }).closest("tr") as HTMLElement;
    const badge = within(row("OpenAI: GPT-4o-mini")).getByText("Local dev model");
    expect(badge.getAttribute("title")).toMatch(/local dev model answers in this model's place/);
    expect(within(row("Parley Dev Model")).queryByText("Local dev model")).toBeNull();
  });

  it("saves the checked models in the catalogue's order", async () => {
    const put = vi.spyOn(assistantsApi, "setAllowedModels").mockResolvedValue({
      orgId: "org_1",
      items: [DEV, FAST, LARGE],
      chosen: true,
    });
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    const saveButton = screen.getByRole("button", {
      name: "Save allowed models",
    }) as HTMLButtonElement;
    expect(saveButton.disabled).toBe(true);
    fireEvent.click(box("Parley Dev Fast"));
    fireEvent.click(saveButton);
    await waitFor(() =>
      expect(put).toHaveBeenCalledWith("org_1", [
        "parley/dev",
        "parley/dev-fast",
        "parley/dev-large",
      ]),
    );
  });

  it("shows the API's refusal with display names (409: a profile in use runs the model)", async () => {
    vi.spyOn(assistantsApi, "setAllowedModels").mockRejectedValue(
      new ApiError(
        "conflict",
        "models: parley/dev-large is the model of a profile a project or app runs: choose another model there first",
        409,
        "models",
      ),
    );
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    fireEvent.click(box("Parley Dev Large"));
    fireEvent.click(screen.getByRole("button", { name: "Save allowed models" }));
    expect((await screen.findByRole("alert")).textContent).toBe(
      "Parley Dev Large is the model of a profile a project or app runs: choose another model there first.",
    );
    // Nothing changed: the box stays as the person left it, to fix and try again.
    expect(box("Parley Dev Large").checked).toBe(false);
  });

  it("says every model the API refuses, each by its name", async () => {
    answerEvery(400, {
      error: {
        code: "invalid_request",
        message: "models.0: parley/dev-large is not in the catalogue any more",
        field: "models.0",
        issues: [
          { field: "models.0", message: "parley/dev-large is not in the catalogue any more" },
          { field: "models.1", message: "parley/dev-fast is not in the catalogue any more" },
        ],
      },
    });
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    fireEvent.click(box("Parley Dev Large"));
    fireEvent.click(screen.getByRole("button", { name: "Save allowed models" }));
    const alert = await screen.findByRole("alert");
    expect(
      within(alert)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual([
      "Parley Dev Large is not in the catalogue any more.",
      "Parley Dev Fast is not in the catalogue any more.",
    ]);
  });

  it("asks for at least one model", async () => {
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    await screen.findByRole("table");
    fireEvent.click(box("Parley Dev Model"));
    fireEvent.click(box("Parley Dev Large"));
    expect(screen.getByText("Allow at least one model.")).toBeTruthy();
    expect(
      (screen.getByRole("button", { name: "Save allowed models" }) as HTMLButtonElement).disabled,
    ).toBe(true);
  });

  it("on a phone, lists each model's figures as labelled values, cache rates where listed", async () => {
    wide.value = false;
    await renderInApp(<AllowedModels orgId="org_1" canManage />);
    const list = await screen.findByRole("list", { name: "Models" });
    const fast = within(list).getAllByRole("listitem")[1] as HTMLElement;
    expect(within(fast).getByText("Cache read / 1M").nextSibling?.textContent).toBe("$0.03");
    expect(within(fast).getByText("Cache write / 1M").nextSibling?.textContent).toBe("$0.15");
    const dev = within(list).getAllByRole("listitem")[0] as HTMLElement;
    expect(within(dev).queryByText("Cache read / 1M")).toBeNull();
  });
});

describe("AllowedModels (members)", () => {
  it("shows the allowed models and prices with nothing to change, and does not read the catalogue", async () => {
    await renderInApp(<AllowedModels orgId="org_1" canManage={false} />);
    await screen.findByRole("table");
    expect(screen.getByRole("heading", { name: "Models you can use" })).toBeTruthy();
    expect(screen.queryByRole("checkbox")).toBeNull();
    expect(screen.queryByRole("button", { name: "Save allowed models" })).toBeNull();
    expect(screen.getAllByRole("row")).toHaveLength(3);
    expect(assistantsApi.catalogue).not.toHaveBeenCalled();
  });
});

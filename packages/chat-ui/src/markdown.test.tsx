import { cleanup, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Markdown, PlainText } from "./markdown.tsx";

afterEach(cleanup);

// streamdown renders **bold** as a styled span, marked with data-streamdown="strong".
const STRONG = '[data-streamdown="strong"]';

const DOC = [
  "## Plans",
  "",
  "- **bold** item",
  "- second",
  "",
  "| Plan | Seats |",
  "| --- | --- |",
  "| Team | 5 |",
  "",
  "```ts",
  "const total: number = 1 + 2;",
  "```",
].join("\n");

describe("Markdown", () => {
  it("renders a heading, a list, a table and a code block as elements, not as literal syntax", async () => {
    const { container } = render(<Markdown>{DOC}</Markdown>);
    expect(await screen.findByRole("heading", { level: 2, name: "Plans" })).toBeTruthy();
    const items = screen.getAllByRole("listitem");
    expect(items.map((item) => item.textContent)).toEqual(["bold item", "second"]);
    expect(container.querySelector(STRONG)?.textContent).toBe("bold");
    const table = screen.getByRole("table");
    expect(within(table).getByRole("columnheader", { name: "Seats" })).toBeTruthy();
    expect(within(table).getByRole("cell", { name: "Team" })).toBeTruthy();
    expect(container.querySelector("pre code")?.textContent).toContain("const total");
    expect(container.textContent).not.toContain("**");
    expect(container.textContent).not.toContain("##");
    expect(container.textContent).not.toContain("```");
  });

  it("gives each code block a copy button", async () => {
    render(<Markdown>{"```ts\nconst a = 1;\n```\n\ntext\n\n```sh\nls\n```"}</Markdown>);
    await waitFor(() =>
      expect(screen.getAllByRole("button", { name: "Copy code" })).toHaveLength(2),
    );
  });

  it("closes unfinished syntax while streaming instead of showing it raw", async () => {
    const { container } = render(<Markdown streaming>{"Some **bold"}</Markdown>);
    await waitFor(() => expect(container.querySelector(STRONG)?.textContent).toBe("bold"));
    expect(container.textContent).not.toContain("**");
  });
});

describe("PlainText", () => {
  it("shows markdown syntax as typed, whitespace kept", () => {
    const { container } = render(<PlainText>{"## not a heading\n\n- **x**"}</PlainText>);
    expect(screen.queryByRole("heading")).toBeNull();
    expect(screen.queryByRole("list")).toBeNull();
    expect(container.textContent).toBe("## not a heading\n\n- **x**");
    expect(container.firstElementChild?.className).toContain("whitespace-pre-wrap");
  });
});

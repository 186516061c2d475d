import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { tokenize } from "./light-highlight.tsx";
import { MarkdownRenderer } from "./light-markdown.tsx";
import { plainCell, tableCsv, tableTsv } from "./light-table.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const kinds = (code: string, lang: string) =>
  tokenize(code, lang)
    .filter((token) => token.kind !== "plain")
    .map((token) => [token.kind, token.text]);

describe("the embed's code highlighting", () => {
  it("colours keywords, strings, numbers, comments and calls, and gives back the exact text", () => {
    const code = 'export function add(a: number) {\n  return a + 1; // one\n}\nlog("x");';
    expect(
      tokenize(code, "ts")
        .map((token) => token.text)
        .join(""),
    ).toBe(code);
    expect(kinds(code, "ts")).toEqual([
      ["keyword", "export"],
      ["keyword", "function"],
      ["function", "add"],
      ["keyword", "return"],
      ["number", "1"],
      ["comment", "// one"],
      ["function", "log"],
      ["string", '"x"'],
    ]);
  });

  it("reads # as a comment only where the language says so", () => {
    expect(kinds("x = 1 # note", "python")).toEqual([
      ["number", "1"],
      ["comment", "# note"],
    ]);
    expect(kinds("a { color: #fff }", "css")).not.toContainEqual(["comment", "#fff }"]);
    expect(kinds("SELECT 1 -- why", "sql")).toEqual([
      ["keyword", "SELECT"],
      ["number", "1"],
      ["comment", "-- why"],
    ]);
  });

  it("renders a fenced block with coloured spans and no HTML from the text", () => {
    const { container } = render(
      <MarkdownRenderer text={'```js\nconst a = "<b>x</b>";\n```'} streaming={false} />,
    );
    const code = container.querySelector("pre code");
    expect(code?.querySelector(".text-code-keyword")?.textContent).toBe("const");
    expect(code?.querySelector(".text-code-string")?.textContent).toBe('"<b>x</b>"');
    expect(code?.querySelector("b")).toBeNull();
  });
});

describe("the embed's table tools", () => {
  const head = ["Plan", "Price"];
  const rows = [
    ["**Team**", "$20, monthly"],
    ['Say "hi"', "`$0`"],
  ];

  it("copies a table as tab-separated cells and downloads it as CSV, marks dropped", () => {
    expect(plainCell("[docs](https://x.example) **now**")).toBe("docs now");
    expect(tableTsv(head, rows)).toBe('Plan\tPrice\nTeam\t$20, monthly\nSay "hi"\t$0');
    expect(tableCsv(head, rows)).toBe('Plan,Price\r\nTeam,"$20, monthly"\r\n"Say ""hi""",$0');
  });

  it("offers Copy and CSV over a rendered table", () => {
    const write = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", {
      value: { writeText: write },
      configurable: true,
    });
    render(
      <MarkdownRenderer
        text={"| Plan | Price |\n| --- | --- |\n| Team | $20 |"}
        streaming={false}
      />,
    );
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(write).toHaveBeenCalledWith("Plan\tPrice\nTeam\t$20");
    expect(screen.getByRole("button", { name: "CSV" })).toBeTruthy();
  });
});

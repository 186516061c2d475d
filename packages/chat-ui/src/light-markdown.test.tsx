import { cleanup, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { MarkdownRenderer, parseBlocks, safeHref } from "./light-markdown.tsx";

afterEach(cleanup);

const md = (text: string, streaming = false) =>
  render(<MarkdownRenderer text={text} streaming={streaming} />).container;

describe("light markdown", () => {
  it("renders headings, lists (nested, ordered, tasks), a table, code and a quote as elements", () => {
    const box = md(
      [
        "## Plans",
        "",
        "Some **bold**, *em*, ~~gone~~ and `code`.",
        "",
        "- **bold** item",
        "- second",
        "  - nested",
        "",
        "3. three",
        "4. four",
        "",
        "- [x] done",
        "- [ ] todo",
        "",
        "| Plan | Seats |",
        "| --- | ---: |",
        "| Team \\| Pro | 5 |",
        "",
        "```ts",
        "const total: number = 1 + 2;",
        "```",
        "",
        "> quoted",
        "",
        "---",
      ].join("\n"),
    );
    expect(screen.getByRole("heading", { level: 2, name: "Plans" })).toBeTruthy();
    expect(box.querySelector("strong")?.textContent).toBe("bold");
    expect(box.querySelector("em")?.textContent).toBe("em");
    expect(box.querySelector("del")?.textContent).toBe("gone");
    expect(box.querySelector("p code")?.textContent).toBe("code");
    const lists = box.querySelectorAll(":scope > div > ul, :scope > div > ol");
    expect(lists).toHaveLength(3);
    expect(lists[0]?.querySelector("li ul li")?.textContent).toBe("nested");
    expect(lists[1]?.getAttribute("start")).toBe("3");
    const boxes = [...(lists[2]?.querySelectorAll("input") ?? [])].map((i) => i.checked);
    expect(boxes).toEqual([true, false]);
    const table = screen.getByRole("table");
    expect(
      within(table)
        .getAllByRole("columnheader")
        .map((th) => th.textContent),
    ).toEqual(["Plan", "Seats"]);
    expect(
      within(table)
        .getAllByRole("cell")
        .map((td) => td.textContent),
    ).toEqual(["Team | Pro", "5"]);
    expect(box.querySelector("pre code")?.textContent).toBe("const total: number = 1 + 2;");
    expect(box.querySelector("blockquote")?.textContent).toBe("quoted");
    expect(box.querySelector("hr")).toBeTruthy();
  });

  it("never renders the model's HTML: tags show as text", () => {
    const box = md('<img src=x onerror="alert(1)"> <script>alert(2)</script> <b>hi</b>');
    expect(box.querySelector("img, script, b")).toBeNull();
    expect(box.textContent).toContain("<script>alert(2)</script>");
  });

  it("links only http(s) and mailto, in a new tab, noopener nofollow; images become links", () => {
    const box = md(
      [
        "[site](https://example.com/a?b=1) [mail](mailto:a@b.c) [bad](javascript:alert(1))",
        "[tab](java\tscript:alert(1)) [rel](/admin) [data](data:text/html,x)",
        "see https://parley.example/docs. and <https://x.example>",
        "![logo](https://tracker.example/pixel.png)",
      ].join("\n"),
    );
    const links = [...box.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "https://example.com/a?b=1",
      "mailto:a@b.c",
      "https://parley.example/docs",
      "https://x.example/",
      "https://tracker.example/pixel.png",
    ]);
    for (const a of links) {
      expect(a.getAttribute("rel")).toBe("noopener noreferrer nofollow");
      expect(a.getAttribute("target")).toBe("_blank");
    }
    expect(box.querySelector("img")).toBeNull();
    expect(box.textContent).toContain("bad");
    expect(box.textContent).not.toContain("javascript");
    expect(safeHref("JAVASCRIPT:alert(1)")).toBeNull();
    expect(safeHref(" https://ok.example ")).toBe("https://ok.example/");
  });

  it("streams: an unclosed fence is already code, an unclosed ** shows as typed", () => {
    const box = md("Intro **bold\n\n```js\nlet a = 1;", true);
    expect(box.querySelector("pre code")?.textContent).toBe("let a = 1;");
    expect(box.querySelector("strong")).toBeNull();
    expect(box.textContent).toContain("**bold");
  });

  it("keeps snake_case words and lone asterisks as text", () => {
    const box = md("use snake_case_name and 2 * 3 * 4");
    expect(box.querySelector("em")).toBeNull();
    expect(box.textContent).toBe("use snake_case_name and 2 * 3 * 4");
  });

  it("parses paragraphs and hard breaks", () => {
    expect(parseBlocks("one\ntwo\n\nthree")).toEqual([
      { kind: "p", text: "one\ntwo" },
      { kind: "p", text: "three" },
    ]);
    const box = md("line one  \nline two");
    expect(box.querySelectorAll("br")).toHaveLength(1);
  });
});

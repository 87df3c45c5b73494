import { Fragment as HonoFragment, jsx as honoJsx } from "hono/jsx/jsx-runtime";
import { describe, expect, it } from "vitest";
import { Fragment, jsx } from "../../src/views/jsx-runtime";

type Jsx = (tag: unknown, props: Record<string, unknown>) => unknown;
const X = `<b class="x">Tom & 'Jerry'</b>`;

/** Trees written once, rendered by either runtime (`j` and `F` are its jsx and Fragment), as compiled TSX calls them. */
const TREES: Record<string, (j: Jsx, F: unknown) => unknown> = {
  "text and attributes escaped": (j) => j("p", { title: X, "data-n": 3, children: [X, 42, " ", X] }),
  "null, undefined and booleans render nothing": (j) => j("div", { id: undefined, lang: null, children: [null, undefined, false, true, "", "ok"] }),
  'boolean attributes: listed ones as name="" or absent, others as text': (j) =>
    j("form", {
      children: [
        j("input", { type: "checkbox", checked: true, disabled: false, required: true, "aria-hidden": true, "data-on": false }),
        j("select", { multiple: true, children: [j("option", { selected: true, value: X, children: X }), j("option", { selected: false, children: "b" })] }),
        j("details", { open: true, children: j("summary", { children: "s" }) }),
        j("textarea", { name: "t", readonly: true, children: X }),
        j("button", { type: "submit", name: "decision", value: "approve", class: "approve", children: "Approve" }),
      ],
    }),
  "void elements close themselves; others never": (j) =>
    j("head", {
      children: [j("meta", { charset: "utf-8" }), j("br", {}), j("title", { children: X }), j("link", { rel: "icon", href: "/x?a=1&b=2" }), j("p", {})],
    }),
  "dangerouslySetInnerHTML is not escaped": (j) => j("script", { dangerouslySetInnerHTML: { __html: `if (a < b && c > "d") {}` } }),
  "arrays, nested arrays and fragments": (j, F) =>
    j("ul", { children: [[1, 2].map((n) => j("li", { children: n })), [[j("li", { children: X })]], j(F, { children: [j("li", { children: "f" }), X] })] }),
  "components get props and children; their strings are escaped": (j) => {
    const Item = (p: { label: string; children?: unknown }) => j("li", { class: p.label, children: [p.label, p.children] });
    const Plain = (p: { text: string }) => p.text;
    const Nothing = () => null;
    return j("ol", { children: [j(Item, { label: X, children: j("em", { children: X }) }), j(Plain, { text: X }), j(Nothing, {}), j(Item, { label: "n" })] });
  },
  "className and htmlFor are class and for": (j) => j("label", { className: "c", htmlFor: "f", children: "l" }),
  "svg keeps its attributes' names": (j) =>
    j("svg", {
      viewBox: "0 0 10 10",
      width: "100%",
      children: j("g", {
        class: "span tool",
        children: [j("title", { children: X }), j("rect", { x: 1.5, "fill-opacity": "0.45", "stroke-dasharray": "3 2" })],
      }),
    }),
  "a page": (j) =>
    j("html", {
      lang: "en",
      children: [
        j("head", {
          children: [
            j("meta", { name: "referrer", content: "no-referrer" }),
            j("noscript", { children: j("meta", { "http-equiv": "refresh", content: "3" }) }),
          ],
        }),
        j("body", { children: [j("h1", { children: X }), j("a", { href: `/runs/${encodeURIComponent(X)}?token=a&b`, children: "run" })] }),
      ],
    }),
};

describe("the views' JSX runtime", () => {
  for (const [name, tree] of Object.entries(TREES)) {
    it(`renders as hono/jsx does: ${name}`, async () => {
      const ours = String(tree(jsx as Jsx, Fragment));
      expect(ours).toBe(String(await (tree(honoJsx as Jsx, HonoFragment) as Promise<string>)));
      expect(ours).not.toContain(X);
    });
  }

  it("an element is escaped HTML a Hono context sends as is, and that another element embeds unescaped", async () => {
    const el = jsx("p", { children: X });
    expect((el as unknown as { isEscaped: boolean }).isEscaped).toBe(true);
    expect(String(jsx("div", { children: el }))).toBe(`<div>${el}</div>`);
  });

  it("refuses what it cannot write safely: a bad attribute name, an object or function as a value, a promise or object as a child", () => {
    expect(() => jsx("p", { 'onclick="x"': "y" })).toThrow(`<p>: invalid attribute name "onclick=\\"x\\""`);
    expect(() => jsx("p", { "a b": "y" })).toThrow("invalid attribute name");
    expect(() => jsx("div", { style: { color: "red" } })).toThrow("<div>: attribute style is a string, a number or a boolean, not [object Object]");
    expect(() => jsx("button", { onclick: () => 1 })).toThrow("not [object Function]");
    expect(() => jsx("p", { children: Promise.resolve("x") })).toThrow("a JSX child is text, a number or an element, not [object Promise]");
    expect(() => jsx("p", { children: { toString: () => "<i>" } })).toThrow("not [object Object]");
  });
});

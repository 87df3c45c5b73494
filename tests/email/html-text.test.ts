import { describe, expect, it } from "vitest";
import { decodeEntities, htmlToText } from "../../src/email/html-text";

const text = (html: string, max = 1000) => htmlToText(html, max).text;

describe("htmlToText", () => {
  it("keeps what a reader sees: blocks on their own lines, whitespace collapsed, script/style/comments dropped", () => {
    expect(text("<p>a  \n b</p><p>c<br>d</p>")).toBe("a b\n\nc\nd");
    expect(text("<div><div>\n  x </div>\n</div>\n\n<div></div><div>y</div>")).toBe("x\n\ny");
    expect(text("x<script type='a>b'>if (a < b) alert('</p>')</script >y")).toBe("xy");
    expect(text("x<STYLE>p{}</style>y<!-- <p>no</p> -->z")).toBe("xyz");
    expect(text("<a href=\"https://example.com/?a>b\" title='>'>link</a>")).toBe("link");
    expect(text("a < b and <3 and 1<2")).toBe("a < b and <3 and 1<2");
    expect(text("<svg/>after")).toBe("after");
    expect(text("before<script>never closed <p>hidden")).toBe("before");
  });

  it("decodes entities: named, decimal, hex; unknown and invalid ones are left or replaced", () => {
    expect(decodeEntities("&lt;&GT;&amp;amp;&#65;&#x1F600;&bogus;&#0;&#xD800;&#99999999;")).toBe("<>&amp;A😀&bogus;\ufffd\ufffd&#99999999;");
    expect(text("<p>&lt;script&gt;</p>")).toBe("<script>");
  });

  it("is bounded and linear on hostile html: cut at maxChars and marked incomplete", () => {
    const hostile = [
      "<a ".repeat(200_000), // tags that never end
      '<p title="'.repeat(200_000), // quotes that never close
      "</".repeat(300_000), // closing tags with no name
      `<script>${"</scrip".repeat(100_000)}`, // a hidden element whose end never comes
      "<!--".repeat(200_000),
      "&#".repeat(300_000) + "&amp".repeat(100_000),
      "x".repeat(1_000_000),
      "<p>y</p>".repeat(200_000),
    ];
    for (const html of hostile) {
      const started = performance.now();
      const out = htmlToText(html, 50_000);
      // Cut only when full (give or take a trailing line break).
      if (!out.complete) expect(out.text.length).toBeGreaterThan(49_990);
      expect(performance.now() - started, html.slice(0, 20)).toBeLessThan(500);
      expect(out.text.length).toBeLessThanOrEqual(50_000);
    }
    expect(htmlToText("x".repeat(10), 5)).toEqual({ text: "xxxxx", complete: false });
    expect(htmlToText("<p>xxxxx</p>", 5)).toEqual({ text: "xxxxx", complete: true });
    // Cut while blank lines were still to be folded: still incomplete.
    expect(htmlToText("<p>y</p>".repeat(10), 6).complete).toBe(false);
    // A text run read in pieces splits no entity and no space.
    expect(text(`a${" ".repeat(20_000)}&amp;${"b".repeat(16_380)} &amp; c`, 100_000)).toBe(`a &${"b".repeat(16_380)} & c`);
  });
});

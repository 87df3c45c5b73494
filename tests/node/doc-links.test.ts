import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { anchors, brokenLinks, linkTargets, slug } from "./markdown-links";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** README.md and every Markdown file under docs/. */
function docFiles(): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".md"));
  return [join(root, "README.md"), ...docs.map((f) => join(root, "docs", f))];
}

describe("documentation links", () => {
  it("every relative link in README.md and docs/ leads to a file and, with #anchor, to a heading", () => {
    const files = docFiles();
    expect(files.length).toBeGreaterThan(1);
    const broken = files.flatMap((f) => brokenLinks(f, root)).map((b) => `${b.file}:${b.line}: (${b.target}) ${b.reason}`);
    expect(broken).toEqual([]);
  });
});

describe("the link checker", () => {
  const dir = mkdtempSync(join(tmpdir(), "doc-links-"));
  mkdirSync(join(dir, "docs"));
  writeFileSync(join(dir, "code.ts"), "");
  writeFileSync(join(dir, "docs", "guide.md"), ["# Guide", "## Write a `.worker` file", "## Deploy", "## Deploy", "```", "## not a heading", "```"].join("\n"));
  const check = (markdown: string) => {
    writeFileSync(join(dir, "README.md"), markdown);
    return brokenLinks(join(dir, "README.md"), dir).map((b) => b.reason);
  };

  it("accepts files, folders, headings (code spans and repeats as GitHub makes them) and external links", () => {
    expect(
      check(
        "[a](docs/guide.md) [b](docs/guide.md#write-a-worker-file) [c](docs/guide.md#deploy-1) [d](./code.ts) [e](docs/) [f](https://x.example/y) [g](#top)\n# Top",
      ),
    ).toEqual([]);
  });

  it("reports a missing file, a missing heading and a missing anchor in the same file", () => {
    expect(check("[a](docs/gone.md)\n[b](docs/guide.md#no-such)\n[c](#nowhere)\n[d](docs/guide.md#not-a-heading)")).toEqual([
      "docs/gone.md does not exist",
      'no heading "#no-such" in docs/guide.md',
      'no heading "#nowhere" in README.md',
      'no heading "#not-a-heading" in docs/guide.md',
    ]);
  });

  it("does not read links inside code blocks or code spans", () => {
    expect(linkTargets("```\n[a](gone.md)\n```\n`[b](gone.md)` [c](here.md)").map((l) => l.target)).toEqual(["here.md"]);
  });

  it("makes GitHub's slugs", () => {
    expect(slug("Ways to decide, and follow-ups")).toBe("ways-to-decide-and-follow-ups");
    expect(slug("1. Engine overhead")).toBe("1-engine-overhead");
    expect(slug("From a `.worker` to a function")).toBe("from-a-worker-to-a-function");
    expect([...anchors("## A\n## A\n## [Link](x.md) here")]).toEqual(["a", "a-1", "link-here"]);
  });
});

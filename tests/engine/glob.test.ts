import { describe, expect, it } from "vitest";
import { globMatcher, MAX_GLOB_LENGTH, type GlobOptions } from "../../src/engine/glob";

const paths: GlobOptions = { slashes: true };
const names: GlobOptions = {};
const hosts: GlobOptions = { ignoreCase: true };
const escaped: GlobOptions = { escapes: true };

/** glob, options, text, matches? */
const cases: Array<[string, GlobOptions, string, boolean]> = [
  // literals, anchored at both ends
  ["notes.md", paths, "notes.md", true],
  ["notes.md", paths, "notes.mdx", false],
  ["notes.md", paths, "my-notes.md", false],
  ["a.b", names, "axb", false], // regex metacharacters are literal
  ["(x)+[y]^$|{}\\", names, "(x)+[y]^$|{}\\", true],
  ["", names, "", true],
  ["", names, "a", false],
  // * stops at / in paths, not elsewhere
  ["*.md", paths, "todo.md", true],
  ["*.md", paths, ".md", true],
  ["*.md", paths, "notes/todo.md", false],
  ["label-*", names, "label-bug", true],
  ["label-*", names, "label-", true],
  ["label-*", names, "labels", false],
  ["a*c", names, "a/b/c", true],
  ["a*b*c", names, "axxbyyc", true],
  ["a*b*c", names, "axxbyy", false],
  // ? is one character, not / in paths
  ["?.md", paths, "a.md", true],
  ["?.md", paths, "ab.md", false],
  ["?.md", paths, ".md", false],
  ["a?c", paths, "a/c", false],
  ["a?c", names, "a/c", true],
  // ** crosses /
  ["**", paths, "", true],
  ["**", paths, "a/b/c", true],
  ["src/**", paths, "src/a/b.ts", true],
  ["src/**", paths, "lib/a.ts", false],
  ["**.md", paths, "a/b/c.md", true],
  // **/ also matches nothing
  ["**/*.md", paths, "todo.md", true],
  ["**/*.md", paths, "notes/2026/todo.md", true],
  ["**/*.md", paths, "notes/todo.txt", false],
  ["a/**/b", paths, "a/b", true],
  ["a/**/b", paths, "a/x/y/b", true],
  ["docs/**/*.md", paths, "docs/guide.md", true],
  ["docs/**/*.md", paths, "docs/x/guide.md", true],
  ["docs/**/*.md", paths, "src/guide.md", false],
  // repeated stars collapse to **
  ["***", paths, "a/b", true],
  ["a/****/b", paths, "a/x/y/b", true],
  ["a/****/b", paths, "a/b", true],
  // case
  ["*.GitHub.com", hosts, "api.github.COM", true],
  ["openai:gpt-4.1*", hosts, "OpenAI:GPT-4.1-mini", true],
  ["openai:gpt-4.1*", names, "OpenAI:GPT-4.1-mini", false],
  ["api.github.com", hosts, "api.github.com.evil.net", false],
  // escapes (eval argument patterns): \* \? \\ are literal; elsewhere, and without the option, \ is itself
  ["*/x\\?p=1", escaped, "https://h/x?p=1", true],
  ["*/x\\?p=1", escaped, "https://h/xZp=1", false],
  ["a\\*", escaped, "a*", true],
  ["a\\*", escaped, "ab", false],
  ["a\\\\*", escaped, "a\\bc", true],
  ["a\\b", escaped, "a\\b", true],
  ["a\\?", names, "a\\x", true],
];

describe("globMatcher", () => {
  it.each(cases)("%j %j on %j → %s", (glob, opts, text, expected) => {
    expect(globMatcher(glob, opts)(text)).toBe(expected);
  });

  it("`**/` matches nothing or a run ending in /, never a run without the /", () => {
    // The old regex (`.*/?`) let a/**/b match a/xb.
    expect(globMatcher("a/**/b", paths)("a/xb")).toBe(false);
  });

  it("runs in linear time on globs that made the old regex backtrack for minutes", () => {
    const long = "a/".repeat(5_000); // 10,000 characters, no "b"
    expect(globMatcher(`${"**".repeat(14)}b`, paths)(long)).toBe(false);
    expect(globMatcher(`${"**/".repeat(14)}b`, paths)(long)).toBe(false);
    expect(globMatcher(`${"*a".repeat(100)}b`, names)(long)).toBe(false);
    expect(globMatcher(`${"*?".repeat(100)}b`, names)(`${long}b`)).toBe(true);
    expect(globMatcher(`${"**".repeat(14)}b`, paths)(`${long}b`)).toBe(true);
  });

  it(`refuses globs over ${MAX_GLOB_LENGTH} characters, naming the limit`, () => {
    expect(() => globMatcher("a".repeat(MAX_GLOB_LENGTH))).not.toThrow();
    expect(() => globMatcher("*".repeat(MAX_GLOB_LENGTH + 1))).toThrow(
      `glob is ${MAX_GLOB_LENGTH + 1} characters long; at most ${MAX_GLOB_LENGTH} are allowed`,
    );
  });
});

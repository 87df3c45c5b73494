import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { toYaml, yamlString } from "../../src/engine/yaml-text";
import { splitWorkerFile } from "../../src/engine/catalog/worker-file";

/** Both YAML versions a reader may use must read back exactly the JSON value. */
const roundTrips = (value: unknown) => {
  const text = toYaml(value);
  const json = JSON.parse(JSON.stringify(value)) as unknown;
  expect(parse(text, { version: "1.2" }), text).toEqual(json);
  expect(parse(text, { version: "1.1" }), text).toEqual(json);
  return text;
};

const HOSTILE_STRINGS = [
  "",
  " ",
  " lead",
  "trail ",
  "a: b",
  "a:b",
  "# c",
  "a #c",
  "- x",
  "? x",
  "! tag",
  "& anchor",
  "* alias",
  "| block",
  "> folded",
  "'single'",
  '"double"',
  "---",
  "...",
  "a\n---\nb",
  "line\nbreak",
  "tab\there",
  "cr\rlf",
  "%YAML",
  "@at",
  "`tick`",
  "{a: 1}",
  "[1]",
  "yes",
  "No",
  "ON",
  "off",
  "y",
  "N",
  "true",
  "False",
  "null",
  "NULL",
  "~",
  "123",
  "-1.5",
  "0x1F",
  "0o7",
  "1e3",
  ".inf",
  "-.Inf",
  ".nan",
  "2026-11-25",
  "12:30:00",
  "1_000",
  "<<",
  "=",
  "\u0085next",
  "\u2028sep",
  "\u2029para",
  "\u007fdel",
  "\u009fc1",
  "\ufeffbom",
  "\uffff",
  "\u0000nul",
  "emoji 😀",
  "\ud800 lone",
  "é ü",
  "a,b",
  "with (parens) and/slashes.and-dashes_",
];

describe("toYaml", () => {
  it("writes plain words plainly and quotes anything a YAML reader could take otherwise", () => {
    expect(yamlString("reader")).toBe("reader");
    expect(yamlString("Reads one source file")).toBe("Reads one source file");
    expect(yamlString("test:tools")).toBe('"test:tools"');
    expect(yamlString("yes")).toBe('"yes"');
    expect(yamlString("a\n---\nb")).toBe('"a\\n---\\nb"');
    expect(toYaml({ name: "reader", toolsets: { src: { use: "files", root: "/src" } }, required: ["path"], empty: [], none: {}, nothing: null })).toBe(
      ["name: reader", "toolsets:", "  src:", "    use: files", '    root: "/src"', "required:", "  - path", "empty: []", "none: {}", "nothing: null"].join(
        "\n",
      ),
    );
  });

  it("reads back as the same JSON: hostile strings as values, keys and array items", () => {
    for (const s of HOSTILE_STRINGS) {
      roundTrips({ [s]: s, list: [s, [s], { [s]: [s] }] });
      // No value spans lines: the frontmatter's closing --- is the only one.
      expect(splitWorkerFile(`---\n${toYaml({ v: s, [s]: { k: s } })}\n---\nbody`)?.instructions).toBe("body");
    }
  });

  it("reads back numbers, booleans, nulls, nesting, empty collections and keys longer than YAML's implicit-key limit", () => {
    roundTrips({ n: [0, -0, 1.5, -2, 1e21, 5e-324, Number.MAX_SAFE_INTEGER], b: [true, false], z: null, deep: [[[{ a: [[]] }]], [{}]] });
    const long = "k".repeat(1100);
    const text = roundTrips({ [long]: "v", [`${long}:`]: { nested: [1, { [long]: [] }] } });
    expect(text).toContain("? ");
    // What JSON drops or turns to null, toYaml does too.
    expect(parse(toYaml({ a: undefined, b: [undefined, Number.NaN], c: () => 1 }))).toEqual({ b: [null, null] });
  });

  it("reads back random JSON built from the hostile strings", () => {
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    const pick = () => HOSTILE_STRINGS[rand(HOSTILE_STRINGS.length)]!;
    const value = (depth: number): unknown => {
      const k = rand(depth > 3 ? 4 : 7);
      if (k === 0) return pick();
      if (k === 1) return rand(2) === 0 ? rand(1000) - 500 : rand(1000) / 7;
      if (k === 2) return [true, false, null][rand(3)];
      if (k === 3) return pick() + pick();
      if (k < 6) return Array.from({ length: rand(4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: rand(4) }, () => [pick() + pick(), value(depth + 1)]));
    };
    for (let i = 0; i < 300; i++) roundTrips({ v: value(0) });
  });
});

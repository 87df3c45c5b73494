import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), "utf8");

/** The names a module's `export { … } from` / `export type { … } from` lines export (`a as b` exports b). */
function exportedNames(source: string): string[] {
  return [...source.matchAll(/^export (?:type )?\{([^}]*)\} from/gm)].flatMap((m) =>
    m[1]!
      .split(",")
      .map((part) => part.trim().replace(/^type\s+/, ""))
      .filter(Boolean)
      .map((part) => part.split(/\s+as\s+/).at(-1)!),
  );
}

/** The `code` names in the first column of the table under `## Exports`. */
function documentedNames(markdown: string): string[] {
  const section = markdown.split(/^## Exports$/m)[1]?.split(/^## /m)[0] ?? "";
  return [...section.matchAll(/^\| ([^|]+) \|/gm)].flatMap((row) => [...row[1]!.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]!));
}

describe("docs/api.md documents the edgework entry", () => {
  it("reads export lists and the Exports table as written", () => {
    expect(exportedNames('export { a, type B, c as D } from "./x";\nexport type {\n  E,\n  F,\n} from "./y";\nexport const no = 1;\n')).toEqual([
      "a",
      "B",
      "D",
      "E",
      "F",
    ]);
    expect(documentedNames("# T\n## Exports\n| export | |\n|---|---|\n| `a`, `B` | x `notThis` |\n## Next\n| `c` | |\n")).toEqual(["a", "B"]);
  });

  it("every export of src/edgework.ts has a row, and every row names an export", () => {
    const exported = exportedNames(read("src/edgework.ts"));
    const documented = documentedNames(read("docs/api.md"));
    expect(exported.length).toBeGreaterThan(10);
    expect(exported.filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !exported.includes(name))).toEqual([]);
  });
});

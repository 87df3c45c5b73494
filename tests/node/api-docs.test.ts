import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { codeOf, exportedNames, undocumented } from "./api-exports";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Each published entry's reference page(s): an entry added to package.json's exports must be given one here. */
const REFERENCE: Record<string, string[]> = {
  ".": ["docs/api.md"],
  "./client": ["docs/client.md"],
  "./testing": ["docs/testing.md"],
  "./testing/model-server": ["docs/testing.md"],
};

/** The TypeScript source a published .d.ts is built from: dist/types/<path> mirrors the repository (the app entry), dist/<path> mirrors src/. */
const sourceOf = (types: string) =>
  (types.startsWith("./dist/types/") ? types.slice("./dist/types/".length) : types.replace(/^\.\/dist\//, "src/")).replace(/\.d\.ts$/, ".ts");

/** package.json's entries with their types: subpath → the TypeScript source its .d.ts is built from (dist/X.d.ts ← src/X.ts). */
function entries(): Array<{ subpath: string; source: string }> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> };
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === "object" && target.types)
    .map(([subpath, target]) => ({
      subpath,
      source: join(root, sourceOf((target as { types: string }).types)),
    }));
}

describe("the API reference", () => {
  it("every export of every published entry is mentioned in code on its reference page", () => {
    const published = entries();
    expect(published.map((e) => e.subpath)).toEqual(expect.arrayContaining(["./client", "./testing", "./testing/model-server"]));
    const names = exportedNames(published.map((e) => e.source));
    const missing = published.flatMap(({ subpath, source }) => {
      const pages = REFERENCE[subpath];
      if (!pages) return [`edgework${subpath.slice(1)}: no reference page in tests/node/api-docs.test.ts REFERENCE`];
      const absent = pages.filter((p) => !existsSync(join(root, p)));
      if (absent.length) return [`edgework${subpath.slice(1)}: its reference page ${absent.join(", ")} does not exist`];
      const text = pages.map((p) => readFileSync(join(root, p), "utf8"));
      return undocumented(names.get(source)!, text).map((name) => `edgework${subpath.slice(1)}: ${name} (not in ${pages.join(", ")})`);
    });
    expect(missing).toEqual([]);
  }, 60_000);
});

describe("the check itself", () => {
  it("reads export *, export type * and re-exports; counts only code, as whole words", () => {
    expect(codeOf("Run and `RunPage` and\n```ts\nconst c = new EdgeworkClient();\n```\nNotFoundError")).toBe("RunPage\nconst c = new EdgeworkClient();");
    expect(undocumented(["Run", "RunPage", "EdgeworkClient", "NotFoundError"], ["Run and `RunPage`\n```\nnew EdgeworkClient()\n```\nNotFoundError"])).toEqual([
      "Run",
      "NotFoundError",
    ]);
    const client = join(root, "src/client/index.ts");
    const names = exportedNames([client]).get(client)!;
    // From `export type * from "./types"`, `export { … } from "./errors"` and a type re-export.
    expect(names).toEqual(expect.arrayContaining(["RunPage", "ConflictError", "RunEvent", "EdgeworkClient"]));
  }, 60_000);
});

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), "utf8");

/** The names a module's `export { … } from` / `export type { … } from` lines export (`a as b` exports b). */
function exportListNames(source: string): string[] {
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
    expect(exportListNames('export { a, type B, c as D } from "./x";\nexport type {\n  E,\n  F,\n} from "./y";\nexport const no = 1;\n')).toEqual([
      "a",
      "B",
      "D",
      "E",
      "F",
    ]);
    expect(documentedNames("# T\n## Exports\n| export | |\n|---|---|\n| `a`, `B` | x `notThis` |\n## Next\n| `c` | |\n")).toEqual(["a", "B"]);
  });

  it("every export of src/edgework.ts has a row, and every row names an export", () => {
    const exported = exportListNames(read("src/edgework.ts"));
    const documented = documentedNames(read("docs/api.md"));
    expect(exported.length).toBeGreaterThan(10);
    expect(exported.filter((name) => !documented.includes(name))).toEqual([]);
    expect(documented.filter((name) => !exported.includes(name))).toEqual([]);
  });
});

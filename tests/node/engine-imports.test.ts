import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { engineImportCycles, typesLayerLeaks } from "../../scripts/check-engine-imports.mjs";

/** A throwaway engine folder: file name → source. */
function engineOf(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "engine-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe("scripts/check-engine-imports.mjs", () => {
  it("the engine has no import cycle, type imports included, and types/ imports only types/", () => {
    expect(engineImportCycles()).toEqual([]);
    expect(typesLayerLeaks()).toEqual([]);
  });

  it("counts a circle made of type imports only (import type, import { type X }, export type)", () => {
    const dir = engineOf({
      "a.ts": `import type { B } from "./b";\nexport interface A { b: B }\n`,
      "b.ts": `import { type C } from "./c";\nexport interface B { c: C }\n`,
      "c.ts": `export type { A } from "./a";\nexport interface C { n: number }\n`,
    });
    expect(engineImportCycles(dir)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
  });

  it("names a types/ file that imports a module outside types/", () => {
    const dir = engineOf({
      "types/context.ts": `import type { UsageMeter } from "../usage";\nimport type { StateKV } from "./state";\n`,
      "types/state.ts": `export interface StateKV { n: number }\n`,
      "usage.ts": `export class UsageMeter {}\n`,
    });
    expect(typesLayerLeaks(dir)).toEqual(["types/context.ts → usage.ts"]);
  });
});

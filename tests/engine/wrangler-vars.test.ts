import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { plainVarNames } from "../../durable-objects/engine-config";
import { varNamesInWranglerToml } from "../../src/build/wrangler-vars";
import { wranglerVars as wranglerVarNames } from "../../src/edgework.generated";

describe("which vars are plain (shown) and which are secrets (redacted)", () => {
  it("the build reads the names of wrangler.toml's top-level [vars] only", () => {
    const toml = `name = "x"\n[vars]\nHOST = "api.example.com" # a comment\n  "QUOTED" = "1"\nJSON = { a = 1 }\n# OFF = "commented"\n\n[env.prod.vars]\nPROD_ONLY = "y"\n[[queues.producers]]\nbinding = "Q"\n`;
    expect(varNamesInWranglerToml(toml)).toEqual(["HOST", "QUOTED", "JSON"]);
    expect(varNamesInWranglerToml(`name = "x"\n`)).toEqual([]);
    expect(() => varNamesInWranglerToml(`[vars]\nNOTE = """\nTOKEN = looks like a key\n"""\n`)).toThrow(/\[vars\]: multi-line strings are not supported/);
  });

  it("this app: wrangler.toml's [vars], less any name listed in SECRET_VARS", () => {
    expect(wranglerVarNames).toEqual(expect.arrayContaining(["DEFAULT_MODEL", "MAX_DEPTH"]));
    expect(plainVarNames(env)).toEqual(wranglerVarNames);
    const marked = plainVarNames({ ...env, SECRET_VARS: "MAX_DEPTH" });
    expect(marked).toContain("DEFAULT_MODEL");
    expect(marked).not.toContain("MAX_DEPTH");
  });
});

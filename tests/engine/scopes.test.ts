import { describe, expect, it } from "vitest";
import { counterKind, harness, warnings, workerFile } from "./helpers";

describe("toolset scopes", () => {
  it("call scope: every call (also recursive) gets its own instance from 0, closed once, child before parent", async () => {
    const { kind, log } = counterKind();
    const h = harness(
      {
        "loop.worker": workerFile(`
name: loop
toolsets:
  counter: { use: counter }
  workers: [loop]`),
        "plain.worker": workerFile(`
name: plain
toolsets:
  counter: { use: counter }`),
      },
      { kinds: [kind], maxDepth: 3 },
    );
    const out = await h.run({ worker: "loop", input: { input: "go" } });
    expect(out.status).toBe("succeeded");
    // depth 1, 2, 3 each make an instance; depth 4 is refused before it builds one.
    expect(log.created).toEqual(["counter#1", "counter#2", "counter#3"]);
    expect(log.values).toEqual([1, 1, 1]);
    expect(log.closed).toEqual(["counter#3", "counter#2", "counter#1"]);
    expect(String((out as { output: string }).output)).toContain("call depth 4 exceeds MAX_DEPTH 3: loop → loop → loop → loop");

    const other = await h.run({ worker: "plain", input: { input: "go" } });
    expect(other.status).toBe("succeeded");
    expect(log.values).toEqual([1, 1, 1, 1]);
    expect(log.closed).toHaveLength(4);
  });

  it("a failing close() is logged with the instance name and does not hide the call's result", async () => {
    const { kind, log } = counterKind();
    const h = harness(
      {
        "w.worker": workerFile(`
name: w
toolsets:
  tally: { use: counter, fail_close: true }`),
      },
      { kinds: [kind] },
    );
    const before = warnings.length;
    const out = await h.run({ worker: "w", input: { input: "x" } });
    expect(out.status).toBe("succeeded");
    expect(log.closed).toEqual(["tally#1"]);
    expect(warnings.slice(before).join("\n")).toMatch(/toolset instance "tally" failed to close.*close of tally#1 failed/);
  });

  it("run scope: shared by the calls of one run, not across runs", async () => {
    const { kind, log } = counterKind();
    const shared = `
toolsets:
  counter: { use: counter, scope: run }`;
    const h = harness(
      {
        "parent.worker": workerFile(`name: parent${shared}\n  workers: [child]`),
        "child.worker": workerFile(`name: child${shared}`),
      },
      { kinds: [kind] },
    );
    expect((await h.run({ worker: "parent", input: { input: "a" } })).status).toBe("succeeded");
    expect(log.created).toHaveLength(1);
    expect([...log.values].sort()).toEqual([1, 2]);
    expect(log.closed).toEqual(["counter#1"]);

    expect((await h.run({ worker: "parent", input: { input: "b" } })).status).toBe("succeeded");
    expect(log.created).toHaveLength(2);
    expect([...log.values.slice(2)].sort()).toEqual([1, 2]);
  });

  it("global scope: one instance shared across runs", async () => {
    const { kind, log } = counterKind();
    const h = harness(
      {
        "g.worker": workerFile(`
name: g
toolsets:
  counter: { use: counter, scope: global }`),
      },
      { kinds: [kind] },
    );
    for (let i = 0; i < 3; i++) expect((await h.run({ worker: "g", input: { input: "x" } })).status).toBe("succeeded");
    expect(log.created).toHaveLength(1);
    expect(log.values).toEqual([1, 2, 3]);
  });
});

import { describe, expect, it } from "vitest";
import { flowObjectName } from "../../src/triggers/flow/key";
import { deliveredTo } from "../support/test-flow-key";
import { deliver, issueBody } from "./support";

describe("a key's object per (trigger, key)", () => {
  it("500 keys at once: every key's deliveries meet in its own object, and no object sees another key's", { timeout: 300_000 }, async () => {
    const issues = Array.from({ length: 500 }, (_, i) => 5000 + i);
    deliveredTo.clear();
    // 25 at once (a new object costs the local runtime a SQLite file; production spreads them over machines).
    for (let i = 0; i < issues.length; i += 25) {
      const answers = await Promise.all(issues.slice(i, i + 25).map((n) => deliver("flow-debounce", issueBody(n, 1), null)));
      for (const a of answers) expect(a.status).toBe(202);
    }
    const names = await Promise.all(issues.map((n) => flowObjectName("flow-debounce", ["octo/flow", n])));
    expect(deliveredTo.size).toBe(500);
    for (const name of names) expect(deliveredTo.get(name), name).toBe(1);
    console.log(`500 keys, 500 deliveries: ${deliveredTo.size} objects, at most ${Math.max(...deliveredTo.values())} deliveries each`);
  });
});

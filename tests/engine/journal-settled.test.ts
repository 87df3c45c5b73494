import { describe, expect, it } from "vitest";
import { MemoryJournalStore } from "../../src/engine";
import { Journal } from "../../src/engine/journal/journal";

describe("Journal.othersSettled", () => {
  it("waits for a parallel step to be recorded, not for the worker call the step runs inside", async () => {
    const journal = await Journal.open(new MemoryJournalStore());
    let finishSibling!: () => void;
    let settledAt: string | undefined;
    const order: string[] = [];
    const sibling = journal.step("w/turn:1/tool:a/result", () => new Promise<string>((r) => (finishSibling = () => r("a"))));
    const nested = journal.step("w/turn:1/tool:b/result", async () => {
      // A step inside the worker call `w/turn:1/tool:b`: its ancestor is in flight too, and must not be waited for.
      return journal.step("w/turn:1/tool:b/inner/turn:1/model", async () => {
        await journal.othersSettled("w/turn:1/tool:b/inner/turn:1/model");
        settledAt = order.join(",");
        return "m";
      });
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(settledAt).toBeUndefined();
    order.push("sibling recorded");
    finishSibling();
    await expect(Promise.all([sibling, nested])).resolves.toEqual(["a", "m"]);
    expect(settledAt).toBe("sibling recorded");
    expect(journal.get("w/turn:1/tool:a/result")).toBe("a");
  });
});

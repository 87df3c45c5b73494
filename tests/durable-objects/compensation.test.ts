import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type FakeShop, fakeShop } from "./fake-shop";
import { script, settle, stub } from "./helpers";

let shop: FakeShop;
beforeEach(() => {
  shop = fakeShop();
});
afterEach(() => vi.restoreAllMocks());

const order = (id: string) => ({ tool_calls: [{ name: "shop_fetch", arguments: { url: `https://shop.example/new/${id}`, method: "POST", body: "{}" } }] });
/** Two orders placed, then the model's provider refuses the third turn: the run fails after two effects. */
const failingAfterTwo = [order("a"), order("b"), { status: 400, body: { error: { message: "bad request" } } }];
const EXPECTED = ["POST /new/a", "POST /new/b", "DELETE /orders/b", "DELETE /orders/a"];

describe("compensations", () => {
  it("a run that fails after two effects undoes them newest first, once each, and says so", async () => {
    const id = "undo-plain";
    await script("undo-poster", failingAfterTwo);
    await stub(id).start({ id, worker: "undo-poster", input: { input: "order" }, approvalMode: "ask", budget: {} });
    const view = await settle(id);
    expect(view.status).toBe("failed");
    expect(shop.seen).toEqual(EXPECTED);
    // The call tree says what undid each effect, and that it was made.
    expect(view.call_tree!.tools.map((t) => t.undo)).toMatchObject([
      { tool: "shop_fetch", args: { url: "https://shop.example/orders/a", method: "DELETE" }, status: "ok" },
      { tool: "shop_fetch", args: { url: "https://shop.example/orders/b", method: "DELETE" }, status: "ok" },
    ]);
  });

  // "Evicted after step k" for every k of the run: whatever step the object dies after, each order is
  // placed once and cancelled once, in reverse order (the failure, once met, is not met again by asking the model).
  for (let k = 2; k <= 10; k++) {
    it(`evicted after step ${k}, each effect is still made once and undone once, newest first`, async () => {
      const id = `undo-evict-${k}`;
      await script("undo-poster", [...failingAfterTwo, { text: "a second try of the third turn must not be asked" }]);
      await stub(id).start({ id, worker: "undo-poster", input: { input: "order" }, approvalMode: "ask", budget: {} });
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: k % 2 ? "throw" : "abort" } });
      const view = await settle(id);
      expect(view.status).toBe("failed");
      expect(shop.seen).toEqual(EXPECTED);
    });
  }

  it("a run that succeeds undoes nothing", async () => {
    const id = "undo-none";
    await script("undo-poster", [order("a"), { text: "done" }]);
    await stub(id).start({ id, worker: "undo-poster", input: { input: "order" }, approvalMode: "ask", budget: {} });
    const view = await settle(id);
    expect(view).toMatchObject({ status: "succeeded" });
    expect(shop.seen).toEqual(["POST /new/a"]);
    expect(view.call_tree!.tools[0]!.undo).toMatchObject({ status: "not_made" });
  });
});

describe("an undo that needs an approval", () => {
  it("pauses the failed run until a person decides: approved, the effect is undone; rejected, it stays, and the run says so", async () => {
    const id = "undo-approved";
    await script("undo-asker", failingAfterTwo);
    await stub(id).start({ id, worker: "undo-asker", input: { input: "order" }, approvalMode: "ask", budget: {} });
    let view = await settle(id);
    expect(view.status).toBe("awaiting_approval");
    // Newest first: b's cancel asks first; nothing is cancelled before a person says so.
    expect(shop.seen).toEqual(["POST /new/a", "POST /new/b"]);
    const first = view.approvals.filter((a) => a.status === "pending");
    expect(first).toHaveLength(1);
    expect((await stub(id).decide(first[0]!.id, { decision: "approve", by: "ops" })).ok).toBe(true);
    view = await settle(id);
    const second = view.approvals.filter((a) => a.status === "pending");
    expect(second).toHaveLength(1);
    expect((await stub(id).decide(second[0]!.id, { decision: "reject", by: "ops" })).ok).toBe(true);
    view = await settle(id);
    expect(view.status).toBe("failed");
    expect(shop.seen).toEqual(["POST /new/a", "POST /new/b", "DELETE /orders/b"]);
    expect(view.error?.message).toContain("1 of its effects could not be undone");
    expect(view.call_tree!.tools.map((t) => t.undo?.status)).toEqual(["error", "ok"]);
  });
});

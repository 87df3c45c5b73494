import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RunView } from "../../src/runs/types";
import { type FakeShop, fakeShop } from "./fake-shop";
import { script, settle, stub } from "./helpers";
import { landAt, object, statusEvents } from "./interleave";

/**
 * Compensations on cancel (issue 32, item 5): a run cancelled after effects its tools can undo
 * answers `cancelling`, runs no more of its body, undoes the effects newest first (once each,
 * approval-gated like any call) and ends `cancelled` — whichever await of the run the cancel lands in.
 */

let shop: FakeShop;
beforeEach(() => {
  shop = fakeShop();
});
afterEach(() => vi.restoreAllMocks());

const order = (id: string) => ({ tool_calls: [{ name: "shop_fetch", arguments: { url: `https://shop.example/new/${id}`, method: "POST", body: "{}" } }] });
const ordersThenDone = [order("a"), order("b"), order("c"), { text: "done" }];
/** A DELETE the model asks for: undo-asker asks a person before any DELETE, so the run pauses there. */
const del = { tool_calls: [{ name: "shop_fetch", arguments: { url: "https://shop.example/orders/x", method: "DELETE" } }] };

/** Each order placed is cancelled once, newest first, after the last order. */
function expectEachUndoneOnce(requests: string[]): void {
  const posts = requests.filter((r) => r.startsWith("POST "));
  const deletes = requests.filter((r) => r.startsWith("DELETE "));
  expect(new Set(posts).size, "no order placed twice").toBe(posts.length);
  expect(deletes, "each order undone once, newest first").toEqual(posts.map((p) => `DELETE /orders/${p.split("/").at(-1)}`).reverse());
  expect(requests.slice(0, posts.length), "no order placed after an undo").toEqual(posts);
}

/** Approves the run's undos one at a time (each asks alone, newest first): the run as it stands after the last. */
async function approveEachUndo(id: string, paused: RunView, undos: number): Promise<RunView> {
  let view = paused;
  for (let i = 0; i < undos; i++) {
    const pending = view.approvals.filter((a) => a.status === "pending");
    expect(pending).toHaveLength(1);
    expect((await stub(id).decide(pending[0]!.id, { decision: "approve", by: "ops" })).ok).toBe(true);
    view = await settle(id);
  }
  return view;
}

/** Order a is placed, the run pauses for the model's DELETE, and is cancelled there: it answers `cancelling`. */
async function cancelledWhileAsking(id: string): Promise<void> {
  await start(id, "undo-asker", [order("a"), del]);
  expect((await settle(id)).status).toBe("awaiting_approval");
  expect((await stub(id).cancel()).status).toBe("cancelling");
}

async function start(id: string, worker: string, replies: unknown[]): Promise<void> {
  await script(worker, replies);
  await stub(id).start({ id, worker, input: { input: "order" }, approvalMode: "ask", budget: {} });
}

describe("a cancel of a run with effects to undo", () => {
  it("between activations: answers cancelling, undoes both orders newest first, ends cancelled; its body asks the model no more", async () => {
    const id = "cancel-undo-between";
    await start(id, "undo-poster", ordersThenDone);
    // Thrown before the step that starts once the journal holds 4 steps: two orders placed, the run still running.
    await stub(id).setTestHooks({ fault: { atJournalSize: 4, mode: "throw" } });
    await runDurableObjectAlarm(object(id)).catch(() => {});
    expect((await stub(id).status())!.status).toBe("running");
    const placed = shop.seen.length;
    expect(placed).toBeGreaterThan(0);

    expect(await stub(id).cancel("the customer changed their mind")).toEqual({ ok: true, status: "cancelling" });
    // A second cancel changes nothing (it does not cut the undos short).
    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelling" });
    const view = await settle(id);
    expect(view.status).toBe("cancelled");
    expectEachUndoneOnce(shop.seen);
    expect(shop.seen.filter((r) => r.startsWith("POST ")).length, "no order after the cancel").toBe(placed);
    const events = await statusEvents(id);
    expect(events).toContain("run_cancelling");
    expect(events.at(-1)).toBe("run_cancelled");
    // The call tree shows what undid each effect made (a call the model asked for but the cancel stopped has none).
    expect(view.call_tree!.tools.flatMap((t) => (t.undo ? [t.undo.status] : []))).toEqual(Array(placed).fill("ok"));
    // Ended: a cancel now is refused as for any ended run.
    expect((await stub(id).cancel()).ok).toBe(false);
  });

  it("while an order is in flight: the order it could not stop is undone too, and nothing after it is placed", async () => {
    const id = "cancel-undo-inflight";
    await start(id, "undo-poster", ordersThenDone);
    const held = shop.hold("/new/b");
    const driving = runDurableObjectAlarm(object(id));
    await held.reached;
    const answer = await stub(id).cancel();
    expect(answer).toEqual({ ok: true, status: "cancelling" });
    held.release();
    await driving;
    const view = await settle(id);
    expect(view.status).toBe("cancelled");
    expect(shop.seen).toEqual(["POST /new/a", "POST /new/b", "DELETE /orders/b", "DELETE /orders/a"]);
  });

  // The cancel landing at each pass of the activation's step seam (before and after it): whatever it meets
  // (no order yet at steps 1-2, one at 3-4, two at 5-6), every order made is undone once, newest first,
  // and none is made after the cancel answered.
  for (const when of ["before", "after"] as const) {
    for (let nth = 1; nth <= 6; nth++) {
      it(`landing at step ${nth} (${when} its seam): each order made is undone once and the run ends cancelled`, async () => {
        const id = `cancel-undo-step-${when}-${nth}`;
        await start(id, "undo-poster", ordersThenDone);
        let postsAtCancel = -1;
        const landed = await landAt(id, { point: "activation.step", nth, when }, async () => {
          postsAtCancel = shop.seen.filter((r) => r.startsWith("POST ")).length;
          return stub(id).cancel();
        });
        const view = await settle(id);
        if (!landed.reached) {
          // The run ended before this pass: nothing to cancel, nothing undone.
          expect(view.status).toBe("succeeded");
          return;
        }
        expect(landed.landed).toEqual({ ok: true, status: "cancelling" });
        expect(view.status).toBe("cancelled");
        expectEachUndoneOnce(shop.seen);
        expect(shop.seen.filter((r) => r.startsWith("POST ")).length, "no order started after the cancel answered").toBe(postsAtCancel);
        expect(postsAtCancel, "the orders made before this step").toBe(Math.floor((nth - 1) / 2));
      });
    }
  }

  it("evicted between its undos: each is made once, newest first", async () => {
    for (const k of [5, 6, 7]) {
      shop.seen.length = 0;
      const id = `cancel-undo-evict-${k}`;
      await start(id, "undo-poster", ordersThenDone);
      await stub(id).setTestHooks({ fault: { atJournalSize: 4, mode: "throw" } });
      await runDurableObjectAlarm(object(id)).catch(() => {});
      expect((await stub(id).cancel()).ok).toBe(true);
      // Faults in the undoing activation: after its first undo, or between a call and its result.
      await stub(id).setTestHooks({ fault: { atJournalSize: k, mode: k % 2 ? "throw" : "abort" } });
      const view = await settle(id);
      expect(view.status).toBe("cancelled");
      expectEachUndoneOnce(shop.seen);
    }
  });

  it("paused for an approval: the approval is voided, each undo waits for its own approval, and the run ends cancelled", async () => {
    const id = "cancel-undo-approved";
    // undo-asker asks before any DELETE: the model's own DELETE pauses the run after two orders.
    await start(id, "undo-asker", [order("a"), order("b"), del, { text: "never asked" }]);
    let view = await settle(id);
    expect(view.status).toBe("awaiting_approval");
    const asked = view.approvals.find((a) => a.status === "pending")!;
    expect((await stub(id).cancel()).status).toBe("cancelling");
    view = await settle(id);
    // The body's approval is void: deciding it now changes nothing.
    expect(view.approvals.find((a) => a.id === asked.id)!.status).toBe("voided");
    expect((await stub(id).decide(asked.id, { decision: "approve", by: "ops" })).ok).toBe(false);
    // b's undo asks first.
    expect(view.status).toBe("awaiting_approval");
    view = await approveEachUndo(id, view, 2);
    expect(view.status).toBe("cancelled");
    expect(shop.seen).toEqual(["POST /new/a", "POST /new/b", "DELETE /orders/b", "DELETE /orders/a"]);
  });

  it("takes no message or event while it undoes, and a bulk cancel's status filter still applies", async () => {
    const id = "cancel-undo-refusals";
    await cancelledWhileAsking(id);
    // A flow's follow-up (on_busy: message) or event would be taken and then dropped: refused, so the flow starts a run.
    const followUp = await stub(id).followUp("the next delivery", "d1");
    expect(followUp).toMatchObject({ ok: false, status: 409 });
    expect(await stub(id).sendMessage("and this?")).toMatchObject({ ok: false, status: 409 });
    expect(await stub(id).deliverEvent({ name: "go", id: "e1", payload: {} }, true)).toMatchObject({ ok: false, status: 409 });
    // A bulk cancel of waiting runs does not count this running one as done.
    expect(await stub(id).cancel("bulk", ["waiting"])).toMatchObject({ ok: false, status: 409 });
    const view = await settle(id);
    const pending = view.approvals.filter((a) => a.status === "pending");
    expect(pending).toHaveLength(1); // a's undo
    await stub(id).decide(pending[0]!.id, { decision: "approve", by: "ops" });
    expect((await settle(id)).status).toBe("cancelled");
    expect(shop.seen).toEqual(["POST /new/a", "DELETE /orders/a"]);
  });

  it("the stuck-run sweep gives up on it as cancelled, not failed, and says its effects may stay made", async () => {
    const id = "cancel-undo-swept";
    await cancelledWhileAsking(id);
    // The platform drops its alarm every time (the sweep wakes it a few times, then gives up).
    let verdict: unknown;
    for (let i = 0; i < 8 && verdict !== "failed"; i++) {
      await runInDurableObject(object(id), (_o, state) => state.storage.deleteAlarm());
      verdict = (await stub(id).sweep(0)).verdict;
    }
    expect(verdict).toBe("failed");
    expect((await stub(id).status())!.status).toBe("cancelled");
    const note = await runInDurableObject(
      object(id),
      (_o, state) => state.storage.sql.exec<{ note: string }>("SELECT data ->> '$.note' AS note FROM events WHERE type = 'run_cancelled'").one().note,
    );
    expect(note).toContain("its effects may not all be undone");
  });

  it("a run that failed and is undoing its effects refuses a cancel (409): its undos' approvals stay decidable, it ends failed", async () => {
    const id = "cancel-undo-failing";
    await start(id, "undo-asker", [order("a"), order("b"), { status: 400, body: { error: { message: "bad request" } } }]);
    let view = await settle(id);
    expect(view.status).toBe("awaiting_approval");
    expect(await stub(id).cancel()).toMatchObject({ ok: false, status: 409, error: expect.stringContaining("failed and is undoing") });
    view = await approveEachUndo(id, view, 2);
    expect(view.status).toBe("failed");
    expect(shop.seen).toEqual(["POST /new/a", "POST /new/b", "DELETE /orders/b", "DELETE /orders/a"]);
  });

  it("a run whose tools undo nothing is cancelled at once, as before", async () => {
    const id = "cancel-undo-none";
    await start(id, "undo-poster", ordersThenDone);
    expect(await stub(id).cancel()).toEqual({ ok: true, status: "cancelled" });
    expect((await stub(id).status())!.status).toBe("cancelled");
    expect(shop.seen).toEqual([]);
  });
});

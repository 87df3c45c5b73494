import { expect } from "vitest";
import type { RunView } from "../../src/runs/types";
import { effectCount, effectUrl, script, stub } from "./helpers";

/**
 * Issue 19 item 2, shared by both dispatch modes: code functions that catch every
 * error around a ctx call, driven to their end with the object evicted before each
 * step in turn (`settle` drives one mode's activations). Effects are counted at the
 * fake upstream: a fallback posts only on a real failure, and the last post returns
 * its own response.
 */
export const STEPS = [undefined, 0, 1, 2, 3, 4] as const;

const urls = (id: string) => ({ gated: effectUrl(`${id}-gated`), fallback: effectUrl(`${id}-fallback`), last: effectUrl(`${id}-last`) });
async function start(id: string, worker: string, input: unknown, at: number | undefined): Promise<void> {
  await stub(id).start({ id, worker, input, approvalMode: "ask", budget: {} });
  if (at !== undefined) await stub(id).setTestHooks({ fault: { atJournalSize: at, mode: "abort" } });
}

/** fn-fallback: the model answers (perhaps after a hand-off); no fallback post, one last post with its own answer. */
export async function askWithFallback(tag: string, settle: (id: string) => Promise<RunView>): Promise<void> {
  for (const at of STEPS) {
    const id = `${tag}-${at ?? "clean"}`;
    // Evicted between asking and recording, a request may be made again: enough answers for that.
    await script("fn-fallback", [{ text: "the summary" }, { text: "the summary" }, { text: "the summary" }]);
    const { fallback, last } = urls(id);
    await start(id, "fn-fallback", { fallback, last }, at);
    const view = await settle(id);
    expect(view, `evicted at ${at}`).toMatchObject({ status: "succeeded", output: { answer: "the summary" } });
    expect(JSON.parse((view.output as { last: string }).last), `the last call's own result, evicted at ${at}`).toEqual({ id: `${id}-last`, count: 1 });
    expect(await effectCount(`${id}-fallback`), `fallback posts, evicted at ${at}`).toBe(0);
    expect(await effectCount(`${id}-last`), `last posts, evicted at ${at}`).toBe(1);
  }
}

/** fn-ask-fallback: while the post waits for a person, nothing else is posted; approved, no fallback; rejected, the fallback once. */
export async function approvalWithFallback(tag: string, decision: "approve" | "reject", settle: (id: string) => Promise<RunView>): Promise<void> {
  for (const at of STEPS) {
    const id = `${tag}-${decision}-${at ?? "clean"}`;
    await start(id, "fn-ask-fallback", urls(id), at);
    let view = await settle(id);
    expect(view.status, `evicted at ${at}`).toBe("awaiting_approval");
    expect(view.approvals, `evicted at ${at}`).toMatchObject([{ status: "pending", tool: "gated_fetch" }]);
    expect([await effectCount(`${id}-fallback`), await effectCount(`${id}-last`)], `posts while waiting, evicted at ${at}`).toEqual([0, 0]);
    expect((await stub(id).decide(view.approvals[0]!.id, { decision, by: "test" })).ok).toBe(true);
    view = await settle(id);
    expect(view, `evicted at ${at}`).toMatchObject({ status: "succeeded" });
    const output = view.output as { answer: string; last: string };
    expect(output.answer.startsWith(decision === "approve" ? "posted: " : "fallback: "), `${output.answer}, evicted at ${at}`).toBe(true);
    expect(JSON.parse(output.last), `the last call's own result, evicted at ${at}`).toEqual({ id: `${id}-last`, count: 1 });
    const once = { gated: decision === "approve" ? 1 : 0, fallback: decision === "reject" ? 1 : 0, last: 1 };
    expect(
      { gated: await effectCount(`${id}-gated`), fallback: await effectCount(`${id}-fallback`), last: await effectCount(`${id}-last`) },
      `evicted at ${at}`,
    ).toEqual(once);
  }
}

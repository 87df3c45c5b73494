import { sign } from "@octokit/webhooks-methods";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import type { IoPoint } from "../../durable-objects/run/io";
import type { TestRunDO } from "../support/test-objects";
import { SOON_MS } from "../support/test-objects";
import type { RunView } from "../../src/runs/types";
import { effectCount, effectUrl, modelRequests, script, stub } from "./helpers";
import { alarmOf, landAt, object, statusEvents, type Hold } from "./interleave";

/**
 * The interleaving harness (issue 28, deliver 6): a run is driven from its start to its
 * end; at one pass through one io point (durable-objects/run/io.ts) its object is held,
 * one external request lands there, and the object is released. Then the invariants of
 * durable-objects/run/lifecycle.ts are checked, right after and at the run's end:
 * a cancel sticks; a decision applies to the call it was made for; a requested wake-up
 * is never lost or delayed; no effect or model request happens twice; no run is left
 * queued or running without an alarm; an end is notified (or its notification is still
 * due, with the alarm that sends it); a message accepted is answered.
 */

export const REQUESTS = ["cancel", "decide", "answer", "message", "event", "signal", "resume", "fork", "model-answer", "second-alarm", "sweep"] as const;
export type Request = (typeof REQUESTS)[number];

const TERMINAL = ["succeeded", "failed", "cancelled"];
const DAY = 86_400_000;

/** What a drive step does to the run: its alarm, or (queue mode) the consumer taking the hand-offs. */
type Drive = () => Promise<unknown>;

export interface Scenario {
  /** Short, for run ids. */
  tag: string;
  /** The model the run asks, and how many requests it makes at most. */
  model: string;
  start(id: string): Promise<void>;
  /** Before a drive step: answers what the run waits for (unless the target needs the wait), prepares the target; null when done. */
  next(id: string, view: RunView, target: IoPoint | null): Promise<Drive | null>;
  /** A delivered model answer (queue mode: the consumer serves the hand-offs held). */
  modelAnswer(id: string): Promise<unknown>;
  /** The effects the run posts, by counter id, and what each must count at a run's end that nothing stopped. */
  effects(id: string): Record<string, number>;
  /** What the run's output must be when nothing stopped it. */
  output?: unknown;
}

const alarm = (id: string) => () => runDurableObjectAlarm(object(id));

/** Moves the run's end back past its retention (its events and its row). */
export const age = (id: string, days: number) =>
  runInDurableObject(object(id), (_o, state) => {
    state.storage.sql.exec("UPDATE run SET updated_at = updated_at - ?", days * DAY);
    state.storage.sql.exec("UPDATE events SET at = at - ?", days * DAY);
  });

/** Makes the paused run's follow-up emails due. */
const followUpsDue = (id: string) =>
  runInDurableObject(object(id), (_o, state) => void state.storage.sql.exec("UPDATE approval_mail SET due_at = ? WHERE sent_at IS NULL", Date.now() - 1_000));

const journalSize = (id: string) =>
  runInDurableObject(object(id), (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM journal").one().n);

/** The signed GitHub delivery the `ci-signal` trigger takes (tests/fixtures/workers/triggers.yaml). */
async function ciSignal(sha: string, delivery: string) {
  const body = JSON.stringify({ action: "completed", check_suite: { head_sha: sha, conclusion: "success" } });
  const res = await exports.default.fetch(
    new Request("https://edgework.test/hooks/ci-signal", {
      method: "POST",
      headers: { "content-type": "application/json", "X-Hub-Signature-256": await sign("It's a Secret to Everybody", body), "X-GitHub-Delivery": delivery },
      body,
    }),
  );
  return (await res.json()) as { woken?: number };
}

/** Answers what a paused run waits for, as the people and systems around it would. */
async function answerPause(id: string, view: RunView, by: string): Promise<void> {
  for (const a of view.approvals.filter((x) => x.status === "pending")) {
    await stub(id).decide(a.id, a.kind === "question" ? { decision: "approve", answer: "42", by } : { decision: "approve", by });
  }
  for (const w of view.waits.filter((x) => x.kind === "event")) {
    await stub(id).deliverEvent({ name: w.name!, id: `${by}-${id}`, key: w.key, payload: { by } }, true);
  }
}

/** The completion webhook a harness run posts its end and pauses to (the fake server counts them: tests/support/global-setup.ts). */
export const notifyCounter = (id: string) => `${id}-notify`;

/**
 * fn-interleave (tests/fixtures/functions): a post, a model question, a global tool, a gated post, a question and a keyed wait, a post;
 * its completion webhook hears of its pauses and its end (the outbox's points, io.ts).
 */
export function pipeline(tag: string, modelAnswer: (id: string) => Promise<unknown>, consumeAfterAlarm?: (id: string) => Promise<unknown>): Scenario {
  return {
    tag,
    model: "interleave",
    async start(id) {
      await script("interleave", [{ text: "said" }, { text: "said again" }, { text: "said a third time" }]);
      const notify = { url: { url: effectUrl(notifyCounter(id)), on: ["ended" as const, "paused" as const] } };
      await stub(id).start({ id, worker: "fn-interleave", input: { url: effectUrl(id), key: `sha-${id}` }, approvalMode: "ask", budget: {}, notify });
    },
    async next(id, view, target) {
      if (TERMINAL.includes(view.status)) {
        if (target !== "retention.retire") return null;
        await age(id, 31);
        return alarm(id);
      }
      if (view.status === "awaiting_approval" && target === "approval.follow-up") await followUpsDue(id);
      else if (view.status === "awaiting_approval" || view.status === "waiting") await answerPause(id, view, "driver");
      if (!consumeAfterAlarm) return alarm(id);
      return async () => {
        await runDurableObjectAlarm(object(id));
        await consumeAfterAlarm(id);
      };
    },
    modelAnswer,
    effects: (id) => ({ [`${id}-1`]: 1, [`${id}-gated`]: 1, [`${id}-2`]: 1 }),
    output: { said: "said", answer: "42", got: "received" },
  };
}

/** chat-writer: a conversation; a message is the request that matters here. */
export function conversation(tag: string): Scenario {
  return {
    tag,
    model: "chat-writer",
    async start(id) {
      await script("chat-writer", [
        { tool_calls: [{ name: "fx_fetch", arguments: { url: effectUrl(`${id}-1`), method: "POST" } }] },
        { text: "a1" },
        { text: "a2" },
        { text: "a3" },
      ]);
      await stub(id).start({ id, worker: "chat-writer", input: { input: "m1" }, approvalMode: "ask", budget: {} });
    },
    async next(id, view, target) {
      if (!TERMINAL.includes(view.status)) return alarm(id);
      if (target === "retention.retire") {
        await age(id, 31);
        return alarm(id);
      }
      // An ended run's alarm (retention's, early) is where a message once went missing.
      if (target !== null) return alarm(id);
      return null;
    },
    modelAnswer: async () => null,
    effects: (id) => ({ [`${id}-1`]: 1 }),
  };
}

/**
 * Whether the run's end was notified: `sent` (a notify_sent after its end's event), `due` (its
 * outbox row is waiting, with an alarm that comes no later), or what is wrong.
 */
async function endNotified(id: string): Promise<string> {
  return runInDurableObject(object(id), async (_o, state) => {
    const sql = state.storage.sql;
    const end = sql
      .exec<{ seq: number }>("SELECT seq FROM events WHERE type IN ('run_succeeded', 'run_failed', 'run_cancelled') ORDER BY seq DESC LIMIT 1")
      .toArray()[0]?.seq;
    if (end === undefined) return "no end event";
    if (sql.exec("SELECT 1 FROM events WHERE type = 'notify_sent' AND seq > ?", end).toArray().length) return "sent";
    const made = sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'outbox'").toArray().length > 0;
    const due = made ? sql.exec<{ due_at: number }>("SELECT due_at FROM outbox WHERE event = ?", end).toArray()[0]?.due_at : undefined;
    if (due === undefined) return "no notify_sent and no outbox row";
    const alarm = await state.storage.getAlarm();
    return alarm !== null && alarm <= due ? "due" : `its outbox row is due at ${due}, the alarm ${alarm}`;
  });
}

/** One external request, landed while the object is held; `wakes`: it asked the run to wake (a wake-up the invariants follow). */
interface Landed {
  request: Request;
  ok: boolean;
  wakes: boolean;
  answer: unknown;
  /** A request that may wait for the held I/O itself (a second alarm flushes the index reports in flight): awaited after the release. */
  finishing?: Promise<unknown>;
}

async function land(sc: Scenario, id: string, request: Request, fork: string): Promise<Landed> {
  const run = stub(id);
  const view = await run.status();
  const pending = (kind: "approval" | "question") => view?.approvals.find((a) => a.status === "pending" && a.kind === kind);
  const done = (answer: unknown, ok: boolean, wakes = ok): Landed => ({ request, ok, wakes, answer });
  switch (request) {
    case "cancel": {
      const a = await run.cancel();
      return done(a, a.ok, false);
    }
    case "decide": {
      const a = await run.decide(pending("approval")?.id ?? "ap_none", { decision: "approve", by: "harness" });
      return done(a, a.ok);
    }
    case "answer": {
      const a = await run.decide(pending("question")?.id ?? "ap_none", { decision: "approve", answer: "42", by: "harness" });
      return done(a, a.ok);
    }
    case "message": {
      const a = await run.sendMessage("harness message");
      return done(a, a.ok);
    }
    case "event": {
      const a = await run.deliverEvent({ name: "ci_finished", id: `harness-${id}`, key: `sha-${id}`, payload: { by: "harness" } }, true);
      return done(a, a.ok, a.ok && a.applied && ["awaiting_approval", "waiting"].includes(view?.status ?? ""));
    }
    case "signal": {
      const a = await ciSignal(`sha-${id}`, `harness-signal-${id}`);
      return done(a, (a.woken ?? 0) > 0);
    }
    case "resume": {
      const a = await run.resume();
      return done(a, a.ok);
    }
    case "fork": {
      const steps = await run.journalSteps(0, 1000);
      const at = steps?.steps.at(-1)?.key ?? "none";
      const forked = stub(fork);
      const a = await forked.fork({ id: fork, source: id, at, definitions: "pinned" });
      // The fork is not what is checked: it is stopped before its first alarm could post anything.
      if (a.ok) await forked.cancel();
      return done(a, a.ok, false);
    }
    case "model-answer": {
      const a = await sc.modelAnswer(id);
      return done(a, true, false);
    }
    case "sweep": {
      // The run index's stuck-run sweep, asking as an index that never heard of the run: a live run mid-drive is never stuck.
      const a = await run.sweep(0);
      return done(a, a.verdict === "ok", false);
    }
    case "second-alarm": {
      const finishing = runInDurableObject(object(id), (instance) => (instance as TestRunDO).alarm());
      return { ...done(null, true, false), finishing };
    }
  }
}

export interface Interleaving {
  /** How many of the landings asked for landed (a run that ended first passes no more points). */
  landed: number;
  violations: string[];
}

/** One request landed at a pass through a point: the `occurrence`-th drive step passing it, counted from the landing before. */
export interface Landing {
  hold: Hold;
  request: Request;
  occurrence?: number;
}

/** Drives `sc` from its start to its end, holding the object at `hold` during the `occurrence`-th drive step that passes the point, with `request` landed there. */
export function interleave(sc: Scenario, hold: Hold, request: Request, occurrence = 1): Promise<Interleaving> {
  const id = `il-${sc.tag}-${hold.point}-${hold.nth ?? 1}-${occurrence}-${hold.when ?? "before"}-${request}`.replaceAll(".", "_");
  return interleaveAll(sc, id, [{ hold, request, occurrence }]);
}

/** The same with several landings, in order (the seeded variant). */
export async function interleaveAll(sc: Scenario, id: string, landings: Landing[]): Promise<Interleaving> {
  const violations: string[] = [];
  const violated = (what: string) => violations.push(`${id}: ${what}`);
  await sc.start(id);
  const landed: Array<Landed & { hold: Hold }> = [];
  let afterCancel: { effects: Record<string, number>; models: number; hold: Hold } | undefined;
  let toSkip = (landings[0]?.occurrence ?? 1) - 1;
  for (let step = 0; step < 40; step++) {
    const view = await stub(id).status();
    if (!view) break; // retention deleted it
    const target = landings[landed.length];
    const drive = await sc.next(id, view, target ? target.hold.point : null);
    if (!drive) break;
    if (!target || toSkip > 0) {
      await stub(id).tracePoints();
      await drive();
      if (target && (await stub(id).tracePoints()).includes(target.hold.point)) toSkip--;
      continue;
    }
    let requested: { landed: Landed; journal: number } | undefined;
    const held = await landAt(
      id,
      target.hold,
      async () => {
        const l = await land(sc, id, target.request, `${id}-fork${landed.length}`);
        if (l.request === "cancel" && l.ok && !afterCancel) afterCancel = { ...(await counts(sc, id)), hold: target.hold };
        requested = { landed: l, journal: await journalSize(id) };
        return l;
      },
      drive,
    );
    if (!held.reached) continue;
    const l = requested!.landed;
    await l.finishing;
    landed.push({ ...l, hold: target.hold });
    toSkip = (landings[landed.length]?.occurrence ?? 1) - 1;
    await checkRightAfter(id, l, requested!.journal, violated);
  }
  if (landed.length) await checkAtEnd(sc, id, landed, afterCancel, violated);
  return { landed: landed.length, violations };
}

/** The io points each drive step of a run left alone passes, in order (what the seeded variant draws its landings from). */
export async function traceOf(sc: Scenario, id: string): Promise<IoPoint[][]> {
  await sc.start(id);
  const drives: IoPoint[][] = [];
  for (let step = 0; step < 40; step++) {
    const view = await stub(id).status();
    const drive = view && (await sc.next(id, view, null));
    if (!drive) break;
    await stub(id).tracePoints();
    await drive();
    drives.push([...new Set(await stub(id).tracePoints())]);
  }
  return drives;
}

async function counts(sc: Scenario, id: string) {
  const effects: Record<string, number> = {};
  for (const key of Object.keys(sc.effects(id))) effects[key] = await effectCount(key);
  return { effects, models: (await modelRequests(sc.model)).length };
}

/** Right after the held step: the wake-up a request asked for is armed (or served), and a live run has an alarm. */
async function checkRightAfter(id: string, landed: Landed, journalThen: number, violated: (what: string) => void): Promise<void> {
  const view = await stub(id).status();
  if (!view) return;
  const alarm = await alarmOf(id);
  if (["queued", "running"].includes(view.status) && alarm === null) violated(`left ${view.status} without an alarm`);
  if (landed.wakes) {
    const served = TERMINAL.includes(view.status) || (await journalSize(id)) > journalThen;
    if (!served && (alarm === null || alarm > Date.now() + SOON_MS))
      violated(`${landed.request}'s wake-up lost or moved later: alarm ${alarm === null ? "none" : new Date(alarm).toISOString()}, status ${view.status}`);
  }
  if (landed.request === "cancel" && landed.ok && view.status !== "cancelled") violated(`cancelled, then ${view.status}`);
  if (landed.request === "sweep" && !landed.ok) violated(`a sweep found the run stuck: ${JSON.stringify(landed.answer)}`);
}

/** At the run's end: what a cancel stopped stays stopped; else every effect and the model request happened once, and the decision took. */
async function checkAtEnd(
  sc: Scenario,
  id: string,
  landed: Landed[],
  afterCancel: { effects: Record<string, number>; models: number; hold: Hold } | undefined,
  violated: (what: string) => void,
): Promise<void> {
  const end = await counts(sc, id);
  const view = await stub(id).status();
  const events = view ? await statusEvents(id) : []; // deleted after its retention: no rows left
  if (view && TERMINAL.includes(view.status) && sc.model === "interleave") {
    const notified = await endNotified(id);
    if (notified !== "sent" && notified !== "due") violated(`its end (${view.status}) is not notified: ${notified}`);
  }
  const messages = landed.filter((l) => l.request === "message" && l.ok).length;
  if (view && messages && view.status === "succeeded") {
    const asked = view.messages.filter((m) => m.role === "user").length - 1;
    const answered = view.messages.filter((m) => m.role === "assistant").length;
    if (asked !== messages || answered !== asked + 1) violated(`${messages} messages accepted, ${asked} taken, ${answered - 1} of them answered`);
  }
  for (const [key, n] of Object.entries(end.effects)) if (n > 1) violated(`effect ${key} posted ${n} times`);
  if (end.models > 1 && sc.model === "interleave") violated(`the model asked ${end.models} times`);
  const cancelled = events.indexOf("run_cancelled");
  if (cancelled >= 0 && events.length > cancelled + 1) violated(`status events after run_cancelled: ${events.slice(cancelled + 1).join(", ")}`);
  if (afterCancel) {
    if (view && view.status !== "cancelled") violated(`a cancel answered ok, and the run ended ${view.status}`);
    for (const [key, n] of Object.entries(end.effects)) if (n > afterCancel.effects[key]!) violated(`effect ${key} posted after the cancel answered`);
    // Only the model request the held await was making may finish.
    const inFlight = afterCancel.hold.point === "model.request" ? 1 : 0;
    if (end.models > afterCancel.models + inFlight) violated("a model request made after the cancel answered");
    return;
  }
  if (!view) return; // deleted after its retention: it had ended
  if (view.status !== "succeeded") {
    violated(`ended ${view.status} (${JSON.stringify(view.error)})`);
    return;
  }
  for (const [key, n] of Object.entries(sc.effects(id))) if (end.effects[key] !== n) violated(`effect ${key} posted ${end.effects[key]} times, not ${n}`);
  if (sc.output !== undefined && JSON.stringify(view.output) !== JSON.stringify(sc.output)) violated(`output ${JSON.stringify(view.output)}`);
  const gated = view.approvals.find((a) => a.kind === "approval");
  if (gated && gated.status !== "approved") violated(`the approval is ${gated.status}`);
  if (landed.some((l) => l.request === "decide" && l.ok) && gated?.decided_by !== "harness") violated("the decision landed is not the one recorded");
  const alarm = await alarmOf(id);
  if (alarm === null || alarm > view.updated_at + 31 * DAY) violated("an ended run without its retention alarm");
}

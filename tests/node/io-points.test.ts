import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { IO_POINTS, type IoPoint } from "../../durable-objects/run/io";
import { DIRECT_POINTS, HELD_ELSEWHERE, QUEUE_POINTS } from "../durable-objects/harness-points";

/**
 * Every `await` of a run's object either goes through the io seam (durable-objects/run/io.ts:
 * `io("point", () => …)`, or sits inside the function such a call runs), or is listed here
 * with why no request can land there. The interleaving harness holds the object at every
 * point of io.ts (tests/durable-objects/harness-points.ts), so a new await is either held
 * there or explained here: it cannot slip in unnoticed.
 */

const ROOT = join(import.meta.dirname, "../..");
const FILES = [
  ...readdirSync(join(ROOT, "durable-objects/run"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `durable-objects/run/${f}`),
  "durable-objects/model-dispatch.ts",
];

/** A storage call, or the lifecycle's alarm (storage only): the input gate stays closed while it runs. */
const STORAGE = "storage: the input gate stays closed while it runs, so no request lands";
/** Our own async function: each of its awaits is checked where it is written. */
const OURS = "one of ours: each await inside it is checked where it is written";
/** crypto.subtle (a digest, an HMAC): no I/O, nothing is delivered to the object meanwhile. */
const CRYPTO = "crypto: no I/O";
const SQLITE = "SQLite behind an async interface: no I/O";

/** The awaits that are not behind the seam, by file and by what they await (a call's callee, else the expression). */
const EXEMPT: Record<string, Record<string, string>> = {
  "durable-objects/run/activation.ts": {
    clearRunState: SQLITE,
    "this.execute": OURS,
    "this.onInterrupted": OURS,
    "this.settle": OURS,
    // The engine's awaits that let a request in are its ports, each a seam: the model (model.request), a global tool
    // (global.call), the notifier (approval.email) and the start of each step (activation.step, where a tool's own
    // I/O — a fetch, an MCP call — ends).
    executeRun: "the engine: what it awaits that lets a request in is one of this object's ports, each behind a seam",
    "this.host.arm": STORAGE,
    "this.host.wakeSoon": STORAGE,
  },
  "durable-objects/run/answer-mail.ts": {
    // The answer mail's sends run inside its callers' seams (alarm.answer-mail, settle.answer-mail).
    "ctx.storage.sync": STORAGE,
    "this.send": "inside the seams alarm.answer-mail and settle.answer-mail of sendDue's callers",
    ours: CRYPTO,
    conversationReference: CRYPTO,
    "mailer.send": "inside the seams alarm.answer-mail and settle.answer-mail of sendDue's callers",
    answerMime: "builds the message in memory",
  },
  "durable-objects/run/outbox.ts": {
    // The notifications' sends run inside their callers' seams (alarm.outbox, settle.outbox).
    "this.tellFlow": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "this.tellParent": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "Promise.all": "the children's cancels, inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "runStub(this.host.env, row.dest).childEnded": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "runStub(this.host.env, row.dest).cancel": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "this.post": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    "flowKeyObject(this.host.env, row.dest).runEnded": "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
    notificationId: CRYPTO,
    postNotification: "inside the seams alarm.outbox and settle.outbox of sendDue's callers",
  },
  "durable-objects/run/controls.ts": {
    "this.host.wakeSoon": STORAGE,
    "this.host.arm": STORAGE,
    "this.parts.lifecycle.armedAt": STORAGE,
    // The catalog's version: a digest, made once per isolate.
    snapshotFor: CRYPTO,
    sameSecret: CRYPTO,
    replyMac: CRYPTO,
    clearRunState: SQLITE,
  },
  "durable-objects/run/conversation.ts": { sha256Hex: CRYPTO, "this.host.wakeSoon": STORAGE },
  "durable-objects/run/children.ts": { "this.host.wakeSoon": STORAGE },
  "durable-objects/run/email-reply.ts": { sameSecret: CRYPTO, conversationMac: CRYPTO },
  // A fork's awaits run in the new run's object before it has a run: every request to it answers as for an unknown
  // run, and the route gives each fork a fresh id, so nothing lands there that could meet a half-made run.
  "durable-objects/run/fork.ts": {
    "stub.forkSource": "before the new run exists (see above)",
    snapshotFor: CRYPTO,
    "this.copy": OURS,
    "this.parts.start": OURS,
    "stub.forkRows": "before the new run exists (see above)",
  },
  "durable-objects/run/index-sync.ts": {
    "this.chain": "the reports in flight: each one's RPC is the seam index.report",
    "this.enqueue": "the reports in flight: each one's RPC is the seam index.report",
    "this.host.wake": STORAGE,
  },
  "durable-objects/run/lifecycle.ts": {
    "this.armedAt": STORAGE,
    "this.known": STORAGE,
    "this.write": STORAGE,
    "this.host.ctx.storage.getAlarm": STORAGE,
    "this.host.ctx.storage.deleteAlarm": STORAGE,
    "this.port.store": STORAGE,
  },
  "durable-objects/run/mail.ts": {
    // The approval's emails run inside their callers' seams (approval.email: the notifier; approval.follow-up).
    sendApprovalEmail: "inside the seams approval.email and approval.follow-up of its callers",
    "this.request": "one recipient's request email: inside the seam approval.email of the notifier",
    "ctx.storage.sync": STORAGE,
  },
  "durable-objects/run/slack.ts": {
    // The Slack posts run inside their callers' seams (approval.email: the notifier; approval.follow-up), as the emails do.
    "slackApi.call": "inside the seams approval.email and approval.follow-up of its callers",
    signSlackAction: CRYPTO,
    "ctx.storage.sync": STORAGE,
  },
  "durable-objects/run/pause.ts": {
    "this.arm": OURS,
    "this.registerCorrelated": OURS,
    "this.host.arm": STORAGE,
    "this.parts.signalled": "delivers an event (controls.ts deliverEvent: its awaits are checked there)",
  },
  "durable-objects/run/retention.ts": { arm: STORAGE, "lifecycle.clear": STORAGE, "ctx.storage.deleteAll": STORAGE },
  // The sweep's awaits are storage only: a sweep takes no I/O, so nothing lands inside it (the harness lands a sweep at each point instead).
  "durable-objects/run/sweep.ts": {
    "this.parts.lifecycle.stuck": STORAGE,
    "this.mend": OURS,
    "this.host.wakeSoon": STORAGE,
    clearRunState: SQLITE,
    "this.host.arm": STORAGE,
  },
  "durable-objects/run/run.ts": {
    "this.parts.dispatch.claim": OURS,
    "this.parts.dispatch.deliver": OURS,
    "this.activate": OURS,
    "pause.stillPaused": OURS,
    "activation.run": OURS,
    finishedRunAlarm: OURS,
    "this.ctx.storage.setAlarm": STORAGE,
  },
  "durable-objects/model-dispatch.ts": {
    "queue.send": "the queue send itself: its one caller awaits it through the seam model.hand-off",
    "this.host.wakeSoon": STORAGE,
    "p.bytes": "reads an attachment: inside the seams model.attachments and claim.wire",
    "Promise.all": "reads attachments: inside the seam claim.wire",
    armedAt: STORAGE,
    "host.arm": STORAGE,
  },
};

interface Await {
  file: string;
  line: number;
  /** What it awaits: a call's callee, else the expression. */
  what: string;
  /** The io point it goes through, if it does. */
  point?: string;
}

/** The io point of `io("point", …)` (as `io`, `this.io`, `this.host.io`…). */
function seamOf(node: ts.Node): string | undefined {
  if (!ts.isCallExpression(node)) return undefined;
  const callee = node.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
  const first = node.arguments[0];
  return name === "io" && first && ts.isStringLiteral(first) ? first.text : undefined;
}

function awaitsOf(file: string): Await[] {
  const sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
  const found: Await[] = [];
  const visit = (node: ts.Node, inside: string | undefined) => {
    if (ts.isAwaitExpression(node)) {
      const e = node.expression;
      const what = ts.isCallExpression(e) ? e.expression.getText(sf) : e.getText(sf);
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      found.push({ file, line, what, point: seamOf(e) ?? inside });
    }
    // Whatever runs inside the function given to io(…) is behind that seam.
    const point = seamOf(node);
    if (point) {
      visit((node as ts.CallExpression).expression, inside);
      for (const [i, a] of (node as ts.CallExpression).arguments.entries()) visit(a, i === 1 ? point : inside);
      return;
    }
    ts.forEachChild(node, (child) => visit(child, inside));
  };
  visit(sf, undefined);
  return found;
}

const all = FILES.flatMap(awaitsOf);

describe("every await of a run's object is an io point or explained (io.ts)", () => {
  it(`finds the awaits of ${FILES.length} files, each behind the seam or exempt with a reason`, () => {
    const loose = all.filter((a) => a.point === undefined && EXEMPT[a.file]?.[a.what] === undefined);
    expect(loose.map((a) => `${a.file}:${a.line} await ${a.what}`)).toEqual([]);
    console.log(
      `io seam: ${all.filter((a) => a.point).length} awaits behind ${new Set(all.map((a) => a.point).filter(Boolean)).size} io points, ${all.filter((a) => !a.point).length} exempt`,
    );
  });

  it("names only io points of io.ts, and uses each of them", () => {
    const named = new Set(all.flatMap((a) => (a.point ? [a.point] : [])));
    // Points whose await is a call made elsewhere (activation.ts wraps the engine's ports in io(…) without awaiting it here).
    const called = new Set(FILES.flatMap((f) => [...readFileSync(join(ROOT, f), "utf8").matchAll(/\bio\(\s*"([a-z.-]+)"/g)].map((m) => m[1]!)));
    for (const p of named) expect(IO_POINTS, p).toContain(p);
    expect(new Set([...named, ...called])).toEqual(new Set(IO_POINTS));
  });

  it("lists no exemption that matches no await (a stale one hides nothing, and says nothing true)", () => {
    const stale = Object.entries(EXEMPT).flatMap(([file, whats]) =>
      Object.keys(whats)
        .filter((what) => !all.some((a) => a.file === file && a.what === what && a.point === undefined))
        .map((w) => `${file}: ${w}`),
    );
    expect(stale).toEqual([]);
  });

  it("the interleaving harness holds the object at every io point", () => {
    expect(new Set([...DIRECT_POINTS, ...QUEUE_POINTS].map((h) => h.point).concat(Object.keys(HELD_ELSEWHERE) as IoPoint[]))).toEqual(new Set(IO_POINTS));
  });
});

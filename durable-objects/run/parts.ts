/**
 * The collaborators of one run's object (RunDO), made once per instance and wired to
 * each other: who needs what is read here, in one place. Owns nothing.
 */

import { compensatesFrom, undosRecorded } from "../../src/engine";
import type { Journal } from "../../src/engine/journal/journal";
import type { OtelVars } from "../../src/otel/exporter";
import type { EventDelivery } from "../../src/runs/types";
import { ModelDispatch } from "../model-dispatch";
import { SqliteStateBackend } from "../sqlite-state";
import { RunActivation } from "./activation";
import { RunAnswerMail } from "./answer-mail";
import { RunAttributes } from "./attributes";
import { RunApprovals } from "./approvals";
import { RunCatalog } from "./catalog";
import { RunControls } from "./controls";
import { RunConversation } from "./conversation";
import { DeltaBuffer } from "./deltas";
import { RunFollowUps } from "./follow-ups";
import { RunFork } from "./fork";
import type { RunHost } from "./host";
import { RunIndexSync } from "./index-sync";
import { RunLifecycle } from "./lifecycle";
import { LoggedJournalStore } from "./log";
import { RunMail } from "./mail";
import { RunOutbox } from "./outbox";
import { RunChildren } from "./children";
import { RunPause } from "./pause";
import { RunRecord } from "./record";
import { RunSlack } from "./slack";
import { RunSweep } from "./sweep";
import { RunTracing } from "./tracing";
import { RunVersions } from "./versions";
import { RunReader } from "./view";
import { RunWaits } from "./waits";

/** What RunDO lets a subclass change (the test pool's TestRunDO: tests/support/test-objects.ts). */
export interface PartSeams {
  /** How long a failed report to the run index (or a wait-index registration) waits before it is sent again. */
  indexRetryMs: number;
  /** The run index object a new run reports to (src/runs/index-shards.ts). */
  indexHome(runId: string): string;
  budgetMs(): number;
  otelVars(): OtelVars;
  stepStarting(key: string, journal: Journal): Promise<void>;
  outcomeReached(): Promise<void>;
  /** Writes the alarm (the lifecycle chose the time). */
  storeAlarm(at: number): Promise<void>;
}

export type RunParts = ReturnType<typeof runParts>;

export function runParts(host: RunHost, seams: PartSeams) {
  const states = new SqliteStateBackend(host.sql);
  const journal = new LoggedJournalStore(host.sql);
  const attributes = new RunAttributes(host);
  journal.stepRecorded = (key, value) => attributes.recorded(key, value);
  const index = new RunIndexSync(host, seams.indexRetryMs, () => attributes.current(), seams.indexHome);
  const approvals = new RunApprovals(host, journal);
  const record = new RunRecord(host, index);
  const followUps = new RunFollowUps(host, journal);
  const children = new RunChildren(host, journal);
  const outbox = new RunOutbox(host, () => children.unfinished());
  const lifecycle: RunLifecycle = new RunLifecycle(
    host,
    approvals,
    {
      store: (at) => seams.storeAlarm(at),
      // Brought forward to a pending index retry, answer mail or notification.
      clamp: (at) => outbox.clamp(answers.clamp(index.clamp(at))),
    },
    {
      takeWaitingMessage: () => followUps.take(host.row()!.worker),
      outcome: (status) => {
        if (status === "failed" || status === "cancelled") followUps.drop(`the run ${status === "failed" ? "failed" : "was cancelled"} before answering them`);
        outbox.plan(status);
      },
      cancelling: () => outbox.planChildCancels(),
    },
  );
  const waits = new RunWaits(host, journal);
  const pinned = new RunCatalog(host.sql);
  const versions = new RunVersions(host.sql);
  const mail = new RunMail(host, approvals);
  const slack = new RunSlack(host, approvals);
  const dispatch = new ModelDispatch(host);
  journal.startedEarlier = (key) => dispatch.handedOffAt(key);
  const tracing = new RunTracing(host);
  const deltas = new DeltaBuffer();
  const signalled = (ev: EventDelivery) => controls.deliverEvent(ev, false);
  const pause = new RunPause(host, { approvals, waits, mail, slack, record, lifecycle, signalled }, seams.indexRetryMs);
  const conversation: RunConversation = new RunConversation(host, { journal, pinned, lifecycle, followUps });
  const answers: RunAnswerMail = new RunAnswerMail(host, conversation);
  const activation = new RunActivation(
    host,
    { states, journal, lifecycle, record, pinned, versions, approvals, waits, mail, slack, pause, answers, outbox, dispatch, deltas, tracing, children },
    seams,
  );
  const controls: RunControls = new RunControls(host, {
    lifecycle,
    approvals,
    waits,
    states,
    dispatch,
    slack,
    stopActivation: () => activation.stop(),
    // Effects to undo: recorded, or maybe about to be (an activation in flight, under a catalog with `compensate:`).
    undosOnCancel: () => {
      const recorded = undosRecorded(journal.recordedKeys());
      if (recorded.failing) return "failing";
      // An activation in flight may record an effect to undo after the cancel answered, if its worker's calls can.
      const mayRecord = activation.running() && activation.catalog !== undefined && compensatesFrom(activation.catalog, host.row()!.worker);
      return recorded.effects || mayRecord ? "effects" : "none";
    },
    cancelled: (run) => tracing.endedOutside(run, { status: "cancelled" }, host.keyGrammar(), seams.otelVars()),
  });
  const reader = new RunReader(host, { journal, pinned, versions, approvals, waits, conversation, attributes, children });
  const forks = new RunFork(host, { pinned, journal, start: (req, p) => controls.start(req, p) });
  const sweep = new RunSweep(host, {
    lifecycle,
    index,
    states,
    failed: (run, error) => tracing.endedOutside(run, { status: "failed", error }, host.keyGrammar(), seams.otelVars()),
  });
  return { children, index, record, lifecycle, pause, activation, controls, conversation, answers, outbox, slack, reader, forks, dispatch, deltas, sweep };
}

import { KEY_GRAMMAR, type KeyGrammar } from "../src/engine/journal/keys";
import { raw, type Sql } from "./sql";

/** Toolset state by scope; both Durable Objects keep it. WITHOUT ROWID: the key is the row. */
const STATE = `
CREATE TABLE IF NOT EXISTS state (
  scope TEXT NOT NULL, scope_id TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (scope, scope_id, namespace, key)
) WITHOUT ROWID;`;

/**
 * One run per RunDO. The journal and events are append-only and have no secondary
 * index, so each step costs one row written (the SSE cursor is their seq columns).
 * Tables keyed by text are WITHOUT ROWID: a rowid table would keep its text key in
 * a second b-tree, one more row written per insert. (Objects created before keep
 * their rowid tables: same columns, same queries.) Each CREATE writes 2 rows, each
 * ALTER 1: a new object gets the latest tables at once, never the upgrades below.
 */
const RUN = `CREATE TABLE IF NOT EXISTS run (
  id TEXT PRIMARY KEY, worker TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL,
  approval_mode TEXT NOT NULL, budget TEXT NOT NULL, trigger TEXT,
  output TEXT, error TEXT, usage TEXT, retries INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  catalog_version TEXT, catalog_files TEXT, edgework_version TEXT, attributes TEXT
) WITHOUT ROWID`;
// started_at: when the step began executing (null for a value recorded without executing, and for rows from before version 8); `at`: when it was recorded.
const JOURNAL = `CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, at INTEGER NOT NULL, started_at INTEGER)`;
/** The journal as versions 3 to 7 made it: what an upgrade from below version 3 creates before version 8 adds its column. */
const JOURNAL_V3 = `CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL, at INTEGER NOT NULL)`;
const APPROVALS = `CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY, key TEXT NOT NULL, call_path TEXT NOT NULL, worker_chain TEXT NOT NULL,
  tool TEXT NOT NULL, args TEXT NOT NULL, description TEXT NOT NULL, notify TEXT,
  status TEXT NOT NULL, note TEXT, decided_by TEXT,
  created_at INTEGER NOT NULL, decided_at INTEGER, expires_at INTEGER NOT NULL,
  asked_step INTEGER, deciders TEXT, kind TEXT, input_schema TEXT
) WITHOUT ROWID`;
// after_step: the journal seq this event follows, so SSE merges both logs in true order.
const EVENTS = `CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, after_step INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL)`;
// Each approval email, planned or sent: request, reminder, escalation (one row per recipient).
// sent_at is claimed before sending, so a crash never sends one twice (at most once).
const APPROVAL_MAIL = `CREATE TABLE IF NOT EXISTS approval_mail (
  approval_id TEXT NOT NULL, kind TEXT NOT NULL, recipient TEXT NOT NULL, due_at INTEGER NOT NULL, sent_at INTEGER,
  PRIMARY KEY (approval_id, kind, recipient)
) WITHOUT ROWID`;

/**
 * MODEL_DISPATCH=queue: model requests handed to the queue (model-dispatch.ts), by
 * journal key, until their answer is recorded in the journal. `claimed`: the attempt
 * a consumer took, so a duplicated message makes no second request even after the
 * object was evicted; `lease_until`: until when that consumer is known to be alive
 * (it renews while the model thinks), so one that died is replaced within a lease,
 * not after the model's whole timeout. Made on first use (`makeOnFirstUse`), not with the tables below: a direct-mode run
 * writes no rows for it; a run that hands a request off pays its 2 rows once. Its
 * definition is the latest version's: an upgrade that changes it must alter it only
 * in objects that made it (it may or may not exist below any version).
 */
const MODEL_DISPATCH = `CREATE TABLE IF NOT EXISTS model_dispatch (
  key TEXT PRIMARY KEY, model TEXT NOT NULL, attempt INTEGER NOT NULL, sent_at INTEGER NOT NULL, claimed INTEGER, lease_until INTEGER, answer TEXT
) WITHOUT ROWID`;

/**
 * Durable waits (run/waits.ts): a timer or event wait the run paused on, by id, kept
 * once (a replay asks again). It ends when its end is in the journal under `key`
 * (after asked_step: WAITS_PENDING), written by the host; the row is never updated.
 * Made on first use: a run that never waits pays nothing.
 */
const WAITS = `CREATE TABLE IF NOT EXISTS waits (
  id TEXT PRIMARY KEY, key TEXT NOT NULL, kind TEXT NOT NULL, name TEXT, correlation TEXT, until INTEGER NOT NULL,
  call_path TEXT NOT NULL, worker_chain TEXT NOT NULL, reason TEXT, created_at INTEGER NOT NULL, asked_step INTEGER NOT NULL
) WITHOUT ROWID`;

/**
 * Events delivered to the run (POST /runs/:id/events/:name, signal triggers), by
 * delivery id, so a second delivery of one id changes nothing. `state`: `taken` by a
 * wait (its journal step holds the payload too), `buffered` until a wait for its name
 * takes it, `dropped` when too many were buffered. Made on first use.
 */
const INBOX = `CREATE TABLE IF NOT EXISTS inbox (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, correlation TEXT, payload TEXT NOT NULL, state TEXT NOT NULL, at INTEGER NOT NULL
) WITHOUT ROWID`;

/**
 * The answers a run mails back to the sender who started it (an email trigger with
 * `reply: true`; run/answer-mail.ts), by answer number. `sent_at` is claimed before
 * sending (never twice); a send the binding refused is put back with a later `due_at`,
 * at most `attempts` times. Made on first use: only a run that mails an answer pays.
 */
const ANSWER_MAIL = `CREATE TABLE IF NOT EXISTS answer_mail (n INTEGER PRIMARY KEY, due_at INTEGER NOT NULL, sent_at INTEGER, attempts INTEGER NOT NULL DEFAULT 0)`;

/**
 * Approval emails (request, reminder, escalation) that were not delivered (run/mail-failures.ts),
 * one row per email of approval_mail's key: the latest refusal's code and reason (no address),
 * how many sends failed, and `final` once none is tried again. A later delivery deletes the row.
 * Made on first use: a run whose mail all went out pays nothing.
 */
const MAIL_FAILURES = `CREATE TABLE IF NOT EXISTS mail_failures (
  approval_id TEXT NOT NULL, kind TEXT NOT NULL, recipient TEXT NOT NULL, attempts INTEGER NOT NULL, code TEXT NOT NULL, reason TEXT NOT NULL,
  final INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (approval_id, kind, recipient)
) WITHOUT ROWID`;

/**
 * Messages that came while the run worked, each waiting its turn (run/follow-ups.ts), by the
 * number it takes in the conversation; `step`: the message step as it will be recorded. Made
 * on first use: only a run sent a message before it answered pays.
 */
const FOLLOW_UPS = `CREATE TABLE IF NOT EXISTS follow_ups (n INTEGER PRIMARY KEY, step TEXT NOT NULL)`;

/**
 * Notifications of the run's ends and pauses (run/outbox.ts), one row per status event and
 * target, planned in the transaction that writes the event and deleted once sent or given up:
 * `kind` 'flow' (the flow key object that started the run: `dest` its name), 'url' (a
 * completion webhook: `dest` its URL), 'parent' (a child run's parent: `dest` its id) or 'child'
 * (a child cancelled with its parent's end: `dest` its id). Made on first use: a run nobody listens to pays nothing.
 */
const OUTBOX = `CREATE TABLE IF NOT EXISTS outbox (
  event INTEGER NOT NULL, target INTEGER NOT NULL, kind TEXT NOT NULL, dest TEXT NOT NULL,
  due_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, first_at INTEGER NOT NULL,
  PRIMARY KEY (event, target)
) WITHOUT ROWID`;

/**
 * The attributes the run's code set (`ctx.setAttribute`, run/attributes.ts), the latest value per
 * name, written when its journal step is recorded (never on replay); the start's are in the run row.
 * Made on first use: a run whose code sets none pays nothing.
 */
/**
 * An approval's Slack message (run/slack.ts): where it was posted (`channel`, `ts`: the thread its
 * follow-ups go to), its reminder and escalation still to post (null once posted, or none planned),
 * and when it was updated to show the decision (`shown`; null while it was not).
 */
const SLACK_MESSAGES = `CREATE TABLE IF NOT EXISTS slack_messages (
  approval_id TEXT PRIMARY KEY, channel TEXT NOT NULL, ts TEXT NOT NULL, remind_at INTEGER, escalate_at INTEGER, shown INTEGER
) WITHOUT ROWID`;
const ATTRIBUTES = `CREATE TABLE IF NOT EXISTS attributes (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`;

/** The run's tables made on first use, not by `migrateRun`. */
const ON_FIRST_USE = {
  model_dispatch: MODEL_DISPATCH,
  waits: WAITS,
  inbox: INBOX,
  answer_mail: ANSWER_MAIL,
  mail_failures: MAIL_FAILURES,
  follow_ups: FOLLOW_UPS,
  outbox: OUTBOX,
  attributes: ATTRIBUTES,
  slack_messages: SLACK_MESSAGES,
} as const;

/** Makes a table of ON_FIRST_USE unless this object has it (no rows written then). */
export const makeOnFirstUse = (sql: Sql, table: keyof typeof ON_FIRST_USE) => sql.script(ON_FIRST_USE[table]);

/** Whether this object made a table of ON_FIRST_USE (a read: nothing is made). */
export const madeOnFirstUse = (sql: Sql, table: keyof typeof ON_FIRST_USE) =>
  sql.one`SELECT 1 AS made FROM sqlite_master WHERE type = 'table' AND name = ${table}` !== undefined;

/** A new run object: version 0 → latest in one step. */
const RUN_TABLES = [RUN, JOURNAL, APPROVALS, EVENTS, APPROVAL_MAIL, STATE];

/** Each version's statements, applied in order to an object below that version (and above 0). */
const RUN_UPGRADES: Array<[version: number, statements: string[]]> = [
  // Version 3: the catalog a run started on, in its row (written with it: no row of its own);
  // the tables an object of version 1 or 2 may lack.
  [3, [JOURNAL_V3, EVENTS, APPROVAL_MAIL, STATE, `ALTER TABLE run ADD COLUMN catalog_version TEXT`, `ALTER TABLE run ADD COLUMN catalog_files TEXT`]],
  // Version 4: a run's outcome lives in the event that ends (or pauses) it, and an
  // approval's decision in its journal step, so neither row is UPDATEd any more (see
  // RUN_CURRENT and APPROVALS_CURRENT). asked_step: the journal seq when the approval
  // was asked; its decision can only come later, so nothing looks further back.
  [4, [`ALTER TABLE approvals ADD COLUMN asked_step INTEGER`]],
  // Version 5: the views became subqueries the queries inline (a view costs rows to create).
  [5, [`DROP VIEW IF EXISTS run_current`, `DROP VIEW IF EXISTS approvals_current`]],
  // Version 6: journal keys of grammar 2 (src/engine/journal/keys.ts). A journal begun
  // before keeps grammar 1, so its run replays onto the keys it recorded; marked here,
  // once, from the schema version alone (never guessed from a key a model could shape).
  [6, [`INSERT OR IGNORE INTO meta (key, value) SELECT 'key_grammar', '1' WHERE EXISTS (SELECT 1 FROM journal)`]],
  // Version 7: the edgework package version a run started under, in its row (run/versions.ts);
  // null for a run started before. The version a later deploy continued it under is a meta row.
  [7, [`ALTER TABLE run ADD COLUMN edgework_version TEXT`]],
  // Version 8: each step's start in its own row (the run's timeline); older rows have none.
  [8, [`ALTER TABLE journal ADD COLUMN started_at INTEGER`]],
  // Version 9: who may decide an approval (the tool's `ask:` list, `allow_initiator`), as JSON; null: whoever it reaches.
  // kind: 'question' for a question to a person (ctx.askHuman), answered with text; null: an approval.
  [9, [`ALTER TABLE approvals ADD COLUMN deciders TEXT`, `ALTER TABLE approvals ADD COLUMN kind TEXT`]],
  // Version 10: the journal's key is unique (sqlite-journal.ts holds it, without an index). A key written
  // twice before (a race between a person's decision and the engine's) keeps the row replay read: the last.
  [10, [`DELETE FROM journal WHERE seq NOT IN (SELECT max(seq) FROM journal GROUP BY key)`]],
  // Version 11: the attributes a run started with (POST /runs, a trigger), as JSON in its row; null: none.
  [11, [`ALTER TABLE run ADD COLUMN attributes TEXT`]],
  // Version 12: the tool's input schema an approver's edit is checked against (JSON); null: approved or rejected as asked only.
  [12, [`ALTER TABLE approvals ADD COLUMN input_schema TEXT`]],
];

/**
 * The run row as it stands. The row is written once, at start; every status change
 * writes only its event: status and updated_at come from the newest lifecycle
 * event (a decision after a pause: its journal step, since while paused only a
 * decision, an expiry or a wait's end writes the journal), the outcome (output, error, usage)
 * from the newest event that ended or paused the run (a cancel: only one that undid effects first carries it), retries from the run_retry
 * events since. Objects of older versions also wrote these into the row: a
 * terminal row status, and an outcome column their events lack, still count.
 */
export const RUN_CURRENT = raw(`(
SELECT id, worker, input, approval_mode, budget, trigger, attributes, created_at, output, error, usage, retries,
  CASE WHEN row_status IN ('succeeded', 'failed', 'cancelled') OR type IS NULL THEN row_status
       WHEN type = 'approval_recorded' OR decided_at IS NOT NULL THEN 'running' ELSE substr(type, 5) END AS status,
  CASE WHEN row_status IN ('succeeded', 'failed', 'cancelled') THEN row_updated_at
       ELSE max(row_updated_at, coalesce(event_at, 0), coalesce(decided_at, 0), coalesce(retry_at, 0)) END AS updated_at
FROM (
  SELECT r.id, r.worker, r.input, r.approval_mode, r.budget, r.trigger, r.attributes, r.created_at,
    r.status AS row_status, r.updated_at AS row_updated_at, e.type, e.at AS event_at,
    coalesce(o.data -> '$.output', r.output) AS output,
    coalesce(o.data -> '$.error', r.error) AS error,
    coalesce(o.data -> '$.usage', r.usage) AS usage,
    coalesce((SELECT data ->> '$.attempt' FROM events WHERE type = 'run_retry' AND seq > coalesce(o.seq, 0) ORDER BY seq DESC LIMIT 1), 0) AS retries,
    (SELECT min(at) FROM journal WHERE e.type IN ('run_awaiting_approval', 'run_waiting') AND seq > e.after_step) AS decided_at,
    (SELECT max(at) FROM events WHERE type = 'run_retry' AND seq > coalesce(e.seq, 0)) AS retry_at
  FROM run r
  LEFT JOIN (
    SELECT seq, after_step, type, at FROM events
    WHERE type IN ('run_queued', 'run_running', 'run_awaiting_approval', 'run_waiting', 'approval_recorded', 'run_succeeded', 'run_failed', 'run_cancelled')
    ORDER BY seq DESC LIMIT 1
  ) e ON 1
  LEFT JOIN (SELECT seq, data FROM events WHERE type IN ('run_awaiting_approval', 'run_waiting', 'run_succeeded', 'run_failed')
    OR (type = 'run_cancelled' AND data -> '$.usage' IS NOT NULL) ORDER BY seq DESC LIMIT 1) o ON 1
))`);

/**
 * An approval as it stands: pending until its decision (or expiry) is in the
 * journal under its key, which is then the only record of it. Older versions
 * also wrote the decision into the row (a status other than pending wins);
 * voided is written to the row when the run ends with the approval undecided.
 * The decision is looked for after asked_step only (a walk of the journal's seq
 * range, no index to write), and stops at the first match.
 */
export const APPROVALS_CURRENT = raw(`(
SELECT a.id, a.key, a.call_path, a.worker_chain, a.tool, a.args, a.description, a.notify, a.deciders, a.kind, a.created_at, a.expires_at, a.input_schema,
  CASE WHEN a.status <> 'pending' OR d.value IS NULL THEN a.status
       WHEN d.value ->> '$.approved' THEN 'approved' WHEN d.value ->> '$.expired' THEN 'expired'
       WHEN d.value ->> '$.response' IS NOT NULL THEN 'responded' ELSE 'rejected' END AS status,
  d.value -> '$.args' AS edited_args,
  d.value ->> '$.response' AS response,
  d.value ->> '$.args_hash' AS args_hash,
  CASE WHEN d.value -> '$.args' IS NOT NULL THEN (
    SELECT r.value ->> '$.error' FROM journal r WHERE r.seq > d.seq AND r.key = a.call_path || '/result' AND r.value ->> '$.denied' LIMIT 1
  ) END AS denied,
  coalesce(a.note, d.value ->> '$.note') AS note,
  coalesce(a.decided_by, d.value ->> '$.by') AS decided_by,
  d.value -> '$.decider' AS decider,
  d.value ->> '$.answer' AS answer,
  coalesce(a.decided_at, d.at) AS decided_at
FROM (
  SELECT *, CASE WHEN status = 'pending' THEN (
    SELECT j.seq FROM journal j WHERE j.seq > coalesce(approvals.asked_step, 0) AND j.key = approvals.key ORDER BY j.seq LIMIT 1
  ) END AS decision_seq FROM approvals
) a LEFT JOIN journal d ON d.seq = a.decision_seq)`);

/** The waits not ended yet: no journal step under their key since they were asked. Only in an object that made `waits`. */
export const WAITS_PENDING = raw(`(
SELECT * FROM waits w WHERE NOT EXISTS (SELECT 1 FROM journal j WHERE j.seq > w.asked_step AND j.key = w.key))`);

function migrate(sql: Sql, tables: string[], upgrades: Array<[version: number, statements: string[]]>): void {
  sql.script(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
  const row = sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'schema_version'`;
  const current = Number(row?.value ?? 0);
  const latest = upgrades.at(-1)![0];
  if (current >= latest) return;
  if (current === 0) for (const s of tables) sql.script(s);
  else for (const [version, statements] of upgrades) if (version > current) for (const s of statements) sql.script(s);
  sql.run`INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ${String(latest)})`;
}

/** The key grammar of the run's journal: 1 when marked by the version 6 upgrade, else the current one (no row). */
export function keyGrammarOf(sql: Sql): KeyGrammar {
  return sql.one<{ value: string }>`SELECT value FROM meta WHERE key = 'key_grammar'`?.value === "1" ? 1 : KEY_GRAMMAR;
}

export const migrateRun = (sql: Sql) => migrate(sql, RUN_TABLES, RUN_UPGRADES);
export const migrateGlobal = (sql: Sql) => migrate(sql, [STATE], [[3, [STATE]]]);

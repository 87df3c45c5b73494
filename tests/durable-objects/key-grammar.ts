import { modelKey, toolCallKeys } from "../../src/engine/journal/keys";

/**
 * Rewrites a run object's journal (and its approvals' keys and call paths) from key
 * grammar 2 to grammar 1, as an object of schema version 5 or older wrote it: each
 * tool call keyed by the model's id (`tool:<id>`, `~<index>` on a repeat), `ctx.step`
 * names raw. The ids come from the recorded answers, as grammar 1 took them.
 */
export function toKeyGrammar1(sql: SqlStorage, rawStepNames: Record<string, string> = {}): void {
  const answers = new Map<string, Array<{ id: string }>>();
  for (const r of sql.exec<{ key: string; value: string }>("SELECT key, value FROM journal")) {
    const calls = (JSON.parse(r.value) as { toolCalls?: Array<{ id: string }> } | null)?.toolCalls;
    if (calls) answers.set(r.key, calls);
  }
  const legacy = (key: string) => {
    const segs = key.split("/");
    const out: string[] = [];
    for (const [i, s] of segs.entries()) {
      const turn = segs[i - 1]?.startsWith("turn:") ? Number(segs[i - 1]!.slice(5)) : undefined;
      if (turn !== undefined && s.startsWith("tool:")) {
        const frame = segs.slice(0, i - 1).join("/");
        const calls = answers.get(modelKey(frame, turn))!;
        out.push(toolCallKeys(1, "", turn, calls)[Number(s.slice(5)) - 1]!.split("/").at(-1)!);
      } else out.push(s.startsWith("step:") && rawStepNames[s.slice(5)] !== undefined ? `step:${rawStepNames[s.slice(5)]}` : s);
    }
    return out.join("/");
  };
  // Each key read against the answers as recorded (grammar 2 paths), then all written at once.
  const journal = sql
    .exec<{ seq: number; key: string }>("SELECT seq, key FROM journal")
    .toArray()
    .map((r) => [r.seq, legacy(r.key)] as const);
  const approvals = sql
    .exec<{ id: string; key: string; call_path: string }>("SELECT id, key, call_path FROM approvals")
    .toArray()
    .map((r) => [r.id, legacy(r.key), legacy(r.call_path)] as const);
  for (const [seq, key] of journal) sql.exec("UPDATE journal SET key = ? WHERE seq = ?", key, seq);
  for (const [id, key, callPath] of approvals) sql.exec("UPDATE approvals SET key = ?, call_path = ? WHERE id = ?", key, callPath, id);
}

/** The journal as schema versions 3 to 7 made it: no `started_at` column (version 8 adds it; their rows have no start). */
export function toJournalBeforeV8(sql: SqlStorage): void {
  sql.exec("ALTER TABLE journal DROP COLUMN started_at");
}

import * as z from "zod";
import { checkWorker } from "../catalog/catalog";
import type { Journal } from "../journal/journal";
import { parseKey } from "../journal/keys";
import { readWorkerFields } from "../catalog/worker-file";
import { toYaml } from "../yaml-text";
import type { ToolsetRegistry } from "../types/kind";
import type { CatalogWorker } from "../types/worker";

/** A created worker as the journal keeps it: a worker file's fields, and who made it with which instance. */
export const recordedCreation = z.object({
  frontmatter: z.record(z.string(), z.unknown()),
  instructions: z.string(),
  /** The creator call's journal path: the worker is a tool of that call, from its next turn on. */
  creator: z.string(),
  /** The creator's file, for errors. */
  by: z.string(),
  /** `<creator file>#<instance>`: what `max_workers` counts. */
  grant: z.string(),
});
export type RecordedCreation = z.output<typeof recordedCreation>;

export interface CreatedWorker {
  worker: CatalogWorker;
  creation: RecordedCreation;
}

/** How errors and the run view name a created worker. */
export const createdFile = (name: string, creatorFile: string) => `worker "${name}" created by ${creatorFile}`;

/** A definition read and checked exactly like a `.worker` file; the problems as `file: field: reason`. */
export function readCreation(c: RecordedCreation, file: string, kinds: ToolsetRegistry): CatalogWorker | string[] {
  const { spec, problems } = readWorkerFields(file, c.frontmatter, c.instructions);
  const all = [...problems, ...(spec ? checkWorker(spec, kinds, null) : [])];
  if (all.length || !spec) return all.map((p) => p.message);
  return { ...spec, workerTools: [] };
}

/**
 * The workers a run created, by name. Every creation in the journal is known from
 * the activation's start (a later `callWorker` resolves it even when the creator's
 * call is replayed whole); a creator's tool list shows one only once replay (or the
 * run) has passed its creation, so each turn offers the tools it offered first.
 */
export class CreatedWorkers {
  private readonly byName = new Map<string, CreatedWorker>();
  private readonly shown = new Map<string, string[]>();
  /** Grows whenever a creator's list of created workers does: the loop re-lists its tools then. */
  version = 0;

  static fromJournal(journal: Journal, kinds: ToolsetRegistry): CreatedWorkers {
    const created = new CreatedWorkers();
    for (const [key, value] of journal.entries()) {
      if (parseKey(key).kind !== "creation") continue;
      const c = recordedCreation.parse(value);
      const name = String(c.frontmatter.name);
      const worker = readCreation(c, createdFile(name, c.by), kinds);
      // It was checked before it was recorded; a catalog that changed since makes it unreadable.
      if (!Array.isArray(worker)) created.add({ worker, creation: c });
    }
    return created;
  }

  get(name: string): CreatedWorker | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  add(c: CreatedWorker): void {
    this.byName.set(c.worker.name, c);
  }

  /** How many workers one `worker_creation` instance of one worker file made in this run. */
  countOf(grant: string): number {
    return [...this.byName.values()].filter((c) => c.creation.grant === grant).length;
  }

  /** From now on the creator call at `creatorPath` lists `name` as a tool. */
  show(creatorPath: string, name: string): void {
    const list = this.shown.get(creatorPath) ?? [];
    if (list.includes(name)) return;
    this.shown.set(creatorPath, [...list, name]);
    this.version++;
  }

  shownTo(creatorPath: string): string[] {
    return this.shown.get(creatorPath) ?? [];
  }
}

/**
 * A created worker as `.worker` file text, to commit to `workers/`: its frontmatter
 * in YAML, as worker files are written, then its instructions. Every string stays on
 * one line (toYaml), so no value can close the frontmatter early.
 */
export function workerFileText(c: RecordedCreation): string {
  return `---\n${toYaml(c.frontmatter)}\n---\n${c.instructions}\n`;
}

/** The definition of the worker a run created under `name`, from its journal's entries. */
export function findCreation(entries: Iterable<[string, unknown]>, name: string): RecordedCreation | undefined {
  for (const [key, value] of entries) {
    if (parseKey(key).kind !== "creation") continue;
    const c = recordedCreation.safeParse(value);
    if (c.success && c.data.frontmatter.name === name) return c.data;
  }
  return undefined;
}

/**
 * Where the run index lives (docs/operate.md, "The run index"): RUN_INDEX_SHARDS objects, a run's
 * by a hash of its id, so a run's reports (start, pause, finish) go to an object only about one
 * run in RUN_INDEX_SHARDS shares, never to one every run shares. A run keeps the shard it chose when
 * it was queued (its object remembers it: durable-objects/run/index-sync.ts); runs queued before the
 * index was sharded have none and keep reporting to LEGACY_INDEX, the object that was the whole
 * index, which every listing reads as one more shard (src/runs/index-listing.ts).
 */

/**
 * How many objects the index spreads over. Each serves on the order of a thousand simple requests
 * a second, so reports stop being the first limit at about 16 × 1,000 / (reports per run) run starts a
 * second (BENCHMARKS.md, "Scale"); a listing asks all of them (RUN_INDEX_SHARDS + 1 requests a page).
 * Raising it is safe (listings read every shard below it; runs keep the shard they chose); lowering it
 * would hide the runs of the shards dropped.
 */
export const RUN_INDEX_SHARDS = 16;

/** The single index object of versions before sharding: read by listings, written only by runs queued then. */
export const LEGACY_INDEX = "index";

/** Shard names share a prefix no older object name had ("index", and tests' own names). */
const SHARD = "index/";

/** FNV-1a (32 bits) of a run id: cheap, stable across versions, and spreads sequential ids. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The shard a new run reports to. */
export const indexShardOf = (runId: string) => `${SHARD}${fnv1a(runId) % RUN_INDEX_SHARDS}`;

/** Every object a listing reads: the shards, then the legacy index. */
export const indexObjects = (): string[] => [...Array.from({ length: RUN_INDEX_SHARDS }, (_, k) => `${SHARD}${k}`), LEGACY_INDEX];

/** Whether a name is one of the index's objects (a run's remembered home is checked before it is used). */
export const isIndexObject = (name: string) => name === LEGACY_INDEX || /^index\/\d{1,4}$/.test(name);

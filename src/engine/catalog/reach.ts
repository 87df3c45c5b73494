import type { CatalogWorker } from "../types/worker";

/**
 * The workers a run of `root` may reach: its own and those it lists (`workers:`, resolved,
 * transitively), each once, `root` first. Empty for an unknown root. (A code function may call
 * any worker by name: its `workers:` is not all it reaches; callers that must know say so.)
 */
export function reachableWorkers(catalog: { get(name: string): CatalogWorker | undefined }, root: string): CatalogWorker[] {
  const reached: CatalogWorker[] = [];
  const seen = new Set<string>();
  const todo = [root];
  for (let name = todo.pop(); name !== undefined; name = todo.pop()) {
    const w = catalog.get(name);
    if (!w || seen.has(name)) continue;
    seen.add(name);
    reached.push(w);
    todo.push(...w.workerTools);
  }
  return reached;
}

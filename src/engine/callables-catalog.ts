import type { Callable, Callables } from "./callables";
import { workerToolDef, type Catalog, type CatalogWorker } from "./catalog";
import { runFunction } from "./functions-run";
import { runWorker } from "./loop";
import type { RunServices } from "./run";

/**
 * The run's callables: the catalog's workers and functions, and the workers the run
 * created, one namespace. The only
 * place that tells an LLM worker from a function; every caller just calls.
 * `run` is read at call time (the run's services include this resolver).
 */
export function catalogCallables(catalog: Catalog, run: () => RunServices): Callables {
  const of = (w: CatalogWorker): Callable => ({
    name: w.name,
    description: workerToolDef(w).description,
    input: w.input,
    file: w.file,
    attachments: w.attachments,
    call: (input, at) => (w.code ? runFunction(run(), w, w.code, input, at) : runWorker(run(), w, input, at)),
  });
  return {
    get: (name) => {
      // Created workers never shadow the catalog: a creation with a taken name is refused.
      const w = catalog.get(name) ?? run().created.get(name)?.worker;
      return w && of(w);
    },
    names: () => [...catalog.workers.keys(), ...run().created.names()].sort(),
    worker: of,
  };
}

import { CatalogError } from "../engine/errors";
import { checkCatalog } from "../engine/catalog/catalog";
import { modelResolver } from "../engine/model/resolver";
import { parseModelsFiles, providerNames } from "../engine/model/providers";
import { defaultPrices } from "../engine/run/usage";
import type { ParseData } from "../engine/data-files";
import type { CodeFunction } from "../engine/types/worker";
import type { ToolsetRegistry } from "../engine/types/kind";
import type { Model, ModelResolver } from "../engine/types/model";
import type { PriceTable } from "../engine/types/usage";
import { judgeWith } from "./judge";
import { runCase, type CaseResult } from "./run-case";
import { caseScriptModel, scriptedJudge } from "./scripted";
import { stubbedKinds, type Stubs } from "./stubs";
import type { EvalCase, EvalSuite } from "./suite";

/** What a suite runs against: the app's definitions as `edgework build` reads them, and its environment. */
export interface EvalEnv {
  /** The catalog's files by relative path: `.worker` files and `models.yaml`. */
  files: Record<string, string>;
  kinds: ToolsetRegistry;
  functions?: readonly CodeFunction[];
  parse: ParseData;
  /** `${NAME}` values (the environment); the suite's `vars` go over them. */
  vars: Readonly<Record<string, string | undefined>>;
  /** More named models, for tests. */
  models?: Record<string, Model>;
}

export interface SuiteResult {
  file: string;
  threshold: number;
  cases: CaseResult[];
}

/**
 * Runs a suite's cases (those of `worker` only, when given), at most `concurrency`
 * at once. Models come from the app's `models.yaml` providers (keys from the
 * environment), the built-in `test:` ones, the suite's scripted judges, or a case's script.
 */
export async function runSuite(suite: EvalSuite, env: EvalEnv, opts: { worker?: string } = {}): Promise<SuiteResult> {
  const stubsByRun = new Map<string, Stubs>();
  const models = parseModelsFiles(env.files, env.parse);
  if (models.problems.length) throw new CatalogError(models.problems);
  const kinds = stubbedKinds(env.kinds, (runId) => stubsByRun.get(runId));
  const { catalog, problems } = checkCatalog(env.files, kinds, env.parse, providerNames(models.config), env.functions);
  if (problems.length) throw new CatalogError(problems);
  const vars = { ...env.vars, ...suite.vars };
  const judges = Object.fromEntries(Object.entries(suite.judges ?? {}).map(([name, reply]) => [name, scriptedJudge(reply)]));
  const base = modelResolver({
    providers: models.config.providers,
    vars,
    openai: { apiKey: vars.OPENAI_API_KEY, baseURL: vars.OPENAI_BASE_URL },
    extra: { ...judges, ...env.models },
  });
  const ask = judgeWith(base);
  const prices = { ...defaultPrices, ...models.config.prices };
  const defaultModel = vars.DEFAULT_MODEL || "test:tools";
  const asked = [...new Set([defaultModel, ...[...catalog.workers.values()].flatMap((w) => (w.model ? [w.model] : []))])];
  const cases = suite.cases.map((c, i) => ({ c, runId: `eval-${i + 1}` })).filter(({ c }) => !opts.worker || (c.worker ?? suite.worker) === opts.worker);
  const results = await mapBounded(cases, suite.concurrency, ({ c, runId }) => {
    stubsByRun.set(runId, { ...suite.tools, ...c.tools });
    const config = { catalog, ...caseModels(c, suite, base, prices, asked), vars, defaultModel };
    return runCase(suite, c, { runId, config, ask });
  });
  return { file: suite.file, threshold: suite.threshold, cases: results };
}

/**
 * A script plays every worker; a named model serves every worker; else each worker asks
 * its own. A run is priced by the names its workers ask for (`asked`): under a named
 * model each of them costs what that model costs.
 */
function caseModels(c: EvalCase, suite: EvalSuite, base: ModelResolver, prices: PriceTable, asked: string[]): { models: ModelResolver; prices: PriceTable } {
  if (c.script) {
    const scripted = caseScriptModel(c.script);
    return { models: () => scripted, prices };
  }
  const model = c.model ?? suite.model;
  if (!model) return { models: base, prices };
  const price = prices[model] ?? { input: 0, output: 0 };
  return { models: () => base(model), prices: { ...prices, ...Object.fromEntries(asked.map((name) => [name, price])) } };
}

/** `fn` over `items`, at most `limit` running at once; results in the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

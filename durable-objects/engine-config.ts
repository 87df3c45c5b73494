import { modelResolver, type EngineConfig, type ModelResolver } from "../src/engine";
import { DEFAULT_MAX_DEPTH } from "../src/engine/run/executor";
import { defaultPrices } from "../src/engine/run/usage";
import { definitions as current, deployedVarNames, type Definitions } from "../src/catalog";
import type { PriceTable } from "../src/engine/types/usage";
import { numberVar } from "../src/config";
import { ConnectionSlots, type Connections } from "../src/engine/net/connection-slots";

/** The built-in prices, then models.yaml's, then the MODEL_PRICES var over both. */
function prices(env: Env, models: Definitions["models"]): PriceTable {
  const table = { ...defaultPrices, ...models.prices };
  if (!env.MODEL_PRICES) return table;
  try {
    return { ...table, ...(JSON.parse(env.MODEL_PRICES) as PriceTable) };
  } catch (err) {
    throw new Error(`MODEL_PRICES is not valid JSON: ${(err as Error).message}`);
  }
}

/** The app's string vars and secrets: the values of `${NAME}` in provider and toolset configs. */
const stringVars = (env: Env) => Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"));

/**
 * The vars whose values runs may show (in results, the journal, the run page): the
 * names of wrangler.toml's [vars], less those named in SECRET_VARS (comma- or
 * space-separated). Every other value — secrets, `.dev.vars` — is redacted.
 */
export const plainVarNames = (env: Env): string[] => {
  const marked = new Set((env.SECRET_VARS ?? "").split(/[\s,]+/).filter(Boolean));
  return deployedVarNames().filter((name) => !marked.has(name));
};

/**
 * The models of a run's models.yaml as this app resolves them: the run's object in
 * direct mode, the model-dispatch consumer in queue mode (so both make the same request).
 */
export function appModels(env: Env, models: Definitions["models"], connections?: Connections): ModelResolver {
  return modelResolver({
    connections,
    openai: { apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL },
    providers: models.providers,
    vars: stringVars(env),
    // Workers AI providers name their binding (`binding: AI`); a missing one fails naming it.
    binding: (name) => (env as unknown as Record<string, unknown>)[name],
  });
}

/** The one default of MODEL_DISPATCH (wrangler.toml does not repeat it). */
export const DEFAULT_DISPATCH = "queue";

/** Where a run's model requests are made: in its object (`direct`) or by the queue consumer (`queue`, the default). */
export function dispatchMode(env: Env): "direct" | "queue" {
  const mode: string = env.MODEL_DISPATCH || DEFAULT_DISPATCH;
  if (mode !== "direct" && mode !== "queue") throw new Error(`MODEL_DISPATCH must be "direct" or "queue", got ${JSON.stringify(mode)}`);
  return mode;
}

/**
 * The engine's configuration for one activation, from the app's vars and secrets; ports come from the
 * Durable Object. `definitions`: the workers and models.yaml a run pinned (default: the current deploy's).
 */
export function engineConfig(
  env: Env,
  ports: Pick<EngineConfig, "states" | "globals" | "beforeStep" | "recordApproval" | "notifier" | "recordWait" | "schedules" | "children">,
  { catalog, models }: Definitions = current(),
): EngineConfig & { connections: ConnectionSlots } {
  const vars = stringVars(env);
  // One line of connections for the activation: its model requests and its toolsets' requests take turns in it.
  const connections = new ConnectionSlots();
  return {
    ...ports,
    connections,
    catalog,
    models: appModels(env, models, connections),
    maxDepth: numberVar(env, "MAX_DEPTH", DEFAULT_MAX_DEPTH),
    prices: prices(env, models),
    defaultModel: env.DEFAULT_MODEL || "test:tools",
    vars,
    plainVars: plainVarNames(env),
  };
}

import { RunError } from "../errors";
import { interpolate } from "../toolsets/interpolate";
import { MODEL_NAME } from "./model";
import { openaiModel, type OpenAIOptions } from "./openai";
import { BUILT_IN_PROVIDERS, type ProviderSpec } from "./providers";
import { redactedErrors } from "./redacted";
import { testToolsModel } from "./test-model";
import { workersAiModel, type AiBinding } from "./workers-ai";
import type { Model, ModelResolver } from "../types/model";
import type { Connections } from "../net/connection-slots";

export interface ResolverOptions {
  /** The built-in `openai:` provider. */
  openai?: OpenAIOptions;
  /** Providers from `models.yaml`. */
  providers?: Record<string, ProviderSpec>;
  /** Values for `${NAME}` in provider configs (the app's vars and secrets). */
  vars?: Readonly<Record<string, string | undefined>>;
  /** The app's bindings by name, for Workers AI providers (`binding: AI`). */
  binding?: (name: string) => unknown;
  /** Injected in tests into every OpenAI-compatible client. */
  fetch?: typeof fetch;
  /** The invocation's connections, for every OpenAI-compatible client (the run's: EngineConfig.connections). */
  connections?: Connections;
  /** Named models (scripted fixtures in tests, `test:<name>`). */
  extra?: Record<string, Model>;
}

/**
 * `openai:<model>` → the official client against OPENAI_BASE_URL; `<provider>:<model>`
 * → the provider `models.yaml` declares, configured when first used (so a missing
 * `${NAME}` or binding fails the model call that needs it, naming it); `test:tools`
 * → the deterministic model.
 */
export function modelResolver(opts: ResolverOptions = {}): ModelResolver {
  const cache = new Map<string, Model>();
  return (name) => {
    const known = opts.extra?.[name] ?? cache.get(name);
    if (known) return known;
    const [, provider, model] = MODEL_NAME.exec(name) ?? [];
    const spec = provider ? opts.providers?.[provider] : undefined;
    let m: Model;
    if (provider === "openai") m = openaiModel(model!, { fetch: opts.fetch, connections: opts.connections, ...opts.openai, provider: "openai" });
    else if (name === "test:tools") m = testToolsModel;
    else if (spec) m = providerModel(provider!, model!, spec, opts);
    else {
      const choices = [...BUILT_IN_PROVIDERS.filter((p) => p !== "test"), ...Object.keys(opts.providers ?? {})].map((p) => `${p}:<model>`);
      throw new Error(`unknown model "${name}": use ${[...choices, "test:tools", ...Object.keys(opts.extra ?? {})].join(", ")}`);
    }
    cache.set(name, m);
    return m;
  };
}

function providerModel(provider: string, model: string, spec: ProviderSpec, opts: ResolverOptions): Model {
  const where = { file: spec.file, field: `providers.${provider}` };
  const { config, substituted } = interpolate(spec.config, opts.vars ?? {}, where);
  return redactedErrors(configuredModel(provider, model, { ...spec, config } as ProviderSpec, where, opts), substituted);
}

/** The provider's model; `spec.config` has its `${NAME}`s filled in already. */
function configuredModel(provider: string, model: string, spec: ProviderSpec, where: { file: string; field: string }, opts: ResolverOptions): Model {
  if (spec.kind === "workers-ai") {
    const config = spec.config;
    const binding = opts.binding?.(config.binding) as Partial<AiBinding> | undefined;
    if (typeof binding?.run !== "function") {
      throw new RunError(
        "config",
        `${where.file}: ${where.field}.binding: the app has no binding "${config.binding}" (add [ai] binding = "${config.binding}" to wrangler.toml)`,
      );
    }
    return workersAiModel(model, binding as AiBinding, { gateway: config.gateway });
  }
  // Each provider gets only what its own config names: no key of another provider, no OPENAI_* var.
  const config = spec.config;
  if (!URL.canParse(config.base_url)) throw new RunError("config", `${where.file}: ${where.field}.base_url: not a URL once its \${NAME}s are filled in`);
  return openaiModel(model, {
    baseURL: config.base_url,
    apiKey: config.api_key,
    headers: config.headers,
    timeoutMs: config.timeout_ms,
    maxRetries: config.max_retries,
    stream: config.stream,
    provider,
    fetch: opts.fetch,
    connections: opts.connections,
  });
}

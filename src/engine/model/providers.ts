import * as z from "zod";
import { malformed, type ParseData } from "../data-files";
import { WorkerFileError } from "../errors";
import { issuesToErrors } from "../catalog/worker-file";
import { MODEL_NAME } from "./model";
import type { PriceTable } from "../types/usage";

/** Providers every app has: `openai:` (OPENAI_BASE_URL, OPENAI_API_KEY) and the built-in `test:` models. */
export const BUILT_IN_PROVIDERS: readonly string[] = ["openai", "test"];

/** The provider part of a model id (`<provider>:<model>`). */
const PROVIDER_NAME = /^[a-z0-9_-]+$/;

/** A URL, or a string whose `${NAME}`s make it one at use time. */
const httpUrl = z.string().refine((s) => s.includes("${") || (URL.canParse(s) && /^https?:$/.test(new URL(s).protocol)), "must be an http(s) URL");

/** Any OpenAI-compatible chat-completions endpoint, through the official `openai` client. */
const openaiCompatibleSpec = z.strictObject({
  base_url: httpUrl,
  api_key: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeout_ms: z.number().int().positive().max(600_000).optional(),
  max_retries: z.number().int().min(0).max(10).optional(),
  /** false: never stream (no live text), for a server that refuses streamed requests. */
  stream: z.boolean().optional(),
});

/** Cloudflare Workers AI through an `[ai]` binding of the app; optionally through an AI Gateway. */
const workersAiSpec = z.strictObject({
  binding: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must name a binding of the app, e.g. AI"),
  gateway: z.string().min(1).optional(),
});

export type OpenAICompatibleSpec = z.infer<typeof openaiCompatibleSpec>;
export type WorkersAiSpec = z.infer<typeof workersAiSpec>;

/** A provider as `models.yaml` declares it; `${NAME}`s are still in it (resolved at use time). */
export type ProviderSpec = { file: string } & ({ kind: "openai-compatible"; config: OpenAICompatibleSpec } | { kind: "workers-ai"; config: WorkersAiSpec });

const price = z.strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() });

const modelsFileSchema = z.strictObject({
  providers: z.record(z.string(), z.unknown()).nullish(),
  prices: z.record(z.string(), price).nullish(),
});

export interface ModelsConfig {
  providers: Record<string, ProviderSpec>;
  /** USD per million tokens, over the built-in defaults. */
  prices: PriceTable;
}

export const providerNames = (config: ModelsConfig): string[] => [...BUILT_IN_PROVIDERS, ...Object.keys(config.providers)];

export const isModelsFile = (file: string) => /(^|\/)models\.yaml$/.test(file);

/**
 * Reads every `models.yaml` of a bundle (relative path → text) into one config.
 * Problems name file and field; a provider or price declared twice is one.
 */
export function parseModelsFiles(files: Record<string, string>, parse: ParseData): { config: ModelsConfig; problems: WorkerFileError[] } {
  const config: ModelsConfig = { providers: {}, prices: {} };
  const problems: WorkerFileError[] = [];
  const priceFiles: Record<string, string> = {};
  for (const [file, text] of Object.entries(files)) {
    if (!isModelsFile(file)) continue;
    const parsed = parseModelsFile(file, text, parse);
    if (Array.isArray(parsed)) {
      problems.push(...parsed);
      continue;
    }
    for (const [name, spec] of Object.entries(parsed.providers)) {
      const first = config.providers[name];
      if (first) problems.push(new WorkerFileError(file, `providers.${name}`, `also declared in ${first.file}; provider names are unique`));
      else config.providers[name] = spec;
    }
    for (const [model, p] of Object.entries(parsed.prices)) {
      if (priceFiles[model]) problems.push(new WorkerFileError(file, `prices.${model}`, `also priced in ${priceFiles[model]}`));
      else [config.prices[model], priceFiles[model]] = [p, file];
    }
  }
  const known = providerNames(config);
  for (const [model, file] of Object.entries(priceFiles)) {
    const provider = MODEL_NAME.exec(model)![1]!;
    if (!known.includes(provider)) problems.push(new WorkerFileError(file, `prices.${model}`, `unknown provider "${provider}"; known: ${known.join(", ")}`));
  }
  return { config, problems };
}

function parseModelsFile(file: string, text: string, parse: ParseData): ModelsConfig | WorkerFileError[] {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (err) {
    return [new WorkerFileError(file, "(file)", malformed(err))];
  }
  const parsed = modelsFileSchema.safeParse(raw ?? {});
  if (!parsed.success) return issuesToErrors(file, parsed.error);
  const problems: WorkerFileError[] = [];
  const providers: Record<string, ProviderSpec> = {};
  for (const [name, rawSpec] of Object.entries(parsed.data.providers ?? {})) {
    const field = `providers.${name}`;
    if (!PROVIDER_NAME.test(name))
      problems.push(new WorkerFileError(file, field, "a provider name is lowercase a-z 0-9 _ - (the part before ':' in a model id)"));
    else if (BUILT_IN_PROVIDERS.includes(name))
      problems.push(new WorkerFileError(file, field, `"${name}" is built in and cannot be redeclared (openai: uses OPENAI_BASE_URL and OPENAI_API_KEY)`));
    else {
      // The shape decides the kind: a `binding` is Workers AI, anything else must be OpenAI-compatible.
      const isBinding = !!rawSpec && typeof rawSpec === "object" && "binding" in rawSpec;
      const spec = (isBinding ? workersAiSpec : openaiCompatibleSpec).safeParse(rawSpec);
      if (!spec.success) problems.push(...issuesToErrors(file, spec.error, field));
      else
        providers[name] = isBinding
          ? { file, kind: "workers-ai", config: spec.data as WorkersAiSpec }
          : { file, kind: "openai-compatible", config: spec.data as OpenAICompatibleSpec };
    }
  }
  for (const model of Object.keys(parsed.data.prices ?? {})) {
    if (!MODEL_NAME.test(model)) problems.push(new WorkerFileError(file, `prices.${model}`, 'must be "provider:model", e.g. anthropic:claude-sonnet-4-5'));
  }
  return problems.length ? problems : { providers, prices: parsed.data.prices ?? {} };
}

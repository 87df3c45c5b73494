import { openaiModel, type OpenAIOptions } from "./openai";
import { MODEL_NAME, type Model, type ModelResolver } from "./model";
import { testToolsModel } from "./test-model";

export const PROVIDERS = ["openai", "test"] as const;

/**
 * `openai:<model>` → the official client; `test:tools` → the deterministic model;
 * `extra` adds named models (scripted fixtures in tests, `test:<name>`).
 */
export function modelResolver(opts: { openai?: OpenAIOptions; extra?: Record<string, Model> } = {}): ModelResolver {
  const cache = new Map<string, Model>();
  return (name) => {
    const known = opts.extra?.[name] ?? cache.get(name);
    if (known) return known;
    const [, provider, model] = MODEL_NAME.exec(name) ?? [];
    let m: Model;
    if (provider === "openai") m = openaiModel(model!, opts.openai ?? {});
    else if (name === "test:tools") m = testToolsModel;
    else throw new Error(`unknown model "${name}": use openai:<model>, test:tools${Object.keys(opts.extra ?? {}).map((k) => `, ${k}`).join("")}`);
    cache.set(name, m);
    return m;
  };
}

import { WorkerFileError } from "../errors";
import { isGlob } from "../glob";
import { MODEL_NAME } from "./model";
import type { WorkerSpec } from "../types/worker";

/**
 * A worker's `model` and the literal providers of its `compatible_models`
 * (`anthropic:claude-*`; a pattern whose provider part is a glob is not checked)
 * must name a known provider: a typo is refused at build, not found at run time.
 */
export function checkModelProviders(s: WorkerSpec, known: readonly string[]): WorkerFileError[] {
  const unknown = (field: string, provider: string) =>
    known.includes(provider) ? [] : [new WorkerFileError(s.file, field, `unknown provider "${provider}"; known: ${known.join(", ")}`)];
  const problems: WorkerFileError[] = [];
  const provider = s.model && MODEL_NAME.exec(s.model)?.[1];
  if (provider) problems.push(...unknown("model", provider));
  (s.compatibleModels ?? []).forEach((pattern, i) => {
    const prefix = pattern.includes(":") ? pattern.slice(0, pattern.indexOf(":")).toLowerCase() : undefined;
    if (prefix && !isGlob(prefix)) problems.push(...unknown(`compatible_models.${i}`, prefix));
  });
  return problems;
}

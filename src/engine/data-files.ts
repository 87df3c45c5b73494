/**
 * Worker files, `triggers.yaml` and `models.yaml` are written in YAML and bundled as
 * JSON (src/build/yaml.ts converts them once the catalog check passed), so the
 * engine reads their data through this port and the deployed app carries no YAML
 * parser. The build and the tests pass the YAML parser; the app passes `parseJson`.
 */
export type ParseData = (text: string) => unknown;

/** Thrown by a `ParseData` for text it cannot read; `line` (1-based, in the text parsed) when the parser knows it. */
export class MalformedData extends Error {
  constructor(
    readonly format: string,
    reason: string,
    readonly line?: number,
  ) {
    super(reason);
    this.name = "MalformedData";
  }
}

/** The bundle's format: JSON, which is also YAML. */
export const parseJson: ParseData = (text) => {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MalformedData("JSON", (err as Error).message);
  }
};

/** "malformed YAML at line 4: reason"; `linesBefore`: the file's lines above the text parsed (a worker's `---`). */
export function malformed(err: unknown, linesBefore = 0): string {
  if (!(err instanceof MalformedData)) return `malformed: ${(err as Error).message}`;
  const where = err.line === undefined ? "" : ` at line ${err.line + linesBefore}`;
  return `malformed ${err.format}${where}: ${err.message}`;
}

// Build time and tests only. Worker files, triggers.yaml and models.yaml are
// written in YAML; the build checks them with this parser (errors with YAML line
// numbers) and then bundles them as JSON, which the app reads with `parseJson`.
// The deployed app never imports this module, so `yaml` stays out of its bundle.
import { parse, YAMLParseError } from "yaml";
import { MalformedData, type ParseData } from "../engine/data-files";
import { splitWorkerFile } from "../engine/catalog/worker-file";

/** YAML as written; a syntax error says its line. */
export const parseYaml: ParseData = (text) => {
  try {
    return parse(text);
  } catch (err) {
    const line = err instanceof YAMLParseError && err.linePos ? err.linePos[0].line : undefined;
    throw new MalformedData("YAML", (err as Error).message.split("\n")[0]!, line);
  }
};

/**
 * The files as the app bundles them: each `.worker` file's frontmatter and each
 * `.yaml` file as JSON, a worker's instructions as written. JSON is YAML, so
 * bundling bundled files changes nothing. For a catalog the check accepted: text
 * that does not parse, or data JSON cannot hold, throws naming the file.
 */
export function bundledFiles(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([file, text]) => [file, bundledFile(file, text)]));
}

function bundledFile(file: string, text: string): string {
  if (!file.endsWith(".worker")) return asJson(file, text);
  const parts = splitWorkerFile(text);
  if (!parts) throw new Error(`${file}: a worker file starts with YAML frontmatter between two '---' lines`);
  // One line of JSON: the `---` that ends the frontmatter cannot occur inside it.
  return `---\n${asJson(file, parts.frontmatter)}\n---\n${parts.instructions}`;
}

function asJson(file: string, yaml: string): string {
  try {
    return JSON.stringify(parseYaml(yaml), (_key, value: unknown) => {
      if (typeof value === "number" && !Number.isFinite(value)) throw new Error(`${value} has no JSON form; write a finite number`);
      return value;
    });
  } catch (err) {
    throw new Error(`${file}: cannot bundle: ${(err as Error).message}`);
  }
}

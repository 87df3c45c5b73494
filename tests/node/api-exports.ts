import ts from "typescript";

/**
 * The API reference check (tests/node/api-docs.test.ts): the public names of each
 * entry of package.json's `exports`, read from its TypeScript source with the
 * compiler's own export resolution (`export *`, `export type *`, re-exports), and
 * which of them a reference page never mentions in code (a code span or block).
 */

/** Every name a module exports, sorted (its default export as `default`). */
export function exportedNames(entries: string[]): Map<string, string[]> {
  const program = ts.createProgram(entries, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: ["node"],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry);
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`${entry}: not a module the compiler could read`);
    names.set(
      entry,
      checker
        .getExportsOfModule(module)
        .map((s) => s.getName())
        .sort(),
    );
  }
  return names;
}

/** The text of a Markdown page's code: fenced blocks and inline code spans. */
export function codeOf(markdown: string): string {
  const code: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (fenced) code.push(line);
    else for (const span of line.matchAll(/`([^`]+)`/g)) code.push(span[1]!);
  }
  return code.join("\n");
}

/** The names no page's code mentions as a whole word. */
export function undocumented(names: string[], pages: string[]): string[] {
  const words = new Set(pages.flatMap((page) => codeOf(page).match(/[A-Za-z_$][\w$]*/g) ?? []));
  return names.filter((name) => !words.has(name));
}

/** Longer texts are shown whole, not diffed: the diff is quadratic in lines. */
const MAX_DIFF_LINES = 400;

/**
 * A line diff of expected against actual, as a person reads it in a terminal or a CI
 * report: `- ` lines only expected, `+ ` lines only got, `  ` both (longest common subsequence).
 */
export function lineDiff(expected: string, actual: string): string {
  const a = expected.split("\n");
  const b = actual.split("\n");
  if (a.length > MAX_DIFF_LINES || b.length > MAX_DIFF_LINES) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)].join("\n");
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    }
    // What was expected goes first, then what came instead.
    else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out.join("\n");
}

/** A value as the diff shows it: pretty JSON, or the text itself. */
export const diffText = (value: unknown): string => (typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined"));

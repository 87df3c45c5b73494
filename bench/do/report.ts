/** Hands a result to scripts/bench.mjs, which reads these lines from vitest's output. */
export function report(section: string, data: unknown): void {
  console.log(`BENCH_RESULT ${JSON.stringify({ section, data })}`);
}

import { terminalText } from "./terminal-text";
import type { CaseResult } from "./run-case";
import type { SuiteResult } from "./run-suite";

export interface EvalReport {
  suites: Array<SuiteResult & { passed: number; rate: number; ok: boolean }>;
  total: number;
  passed: number;
  /** Every suite's pass rate is at least its threshold. */
  ok: boolean;
}

/** Pass rates against each suite's threshold (`threshold`, when given, replaces them all). */
export function summarize(results: readonly SuiteResult[], threshold?: number): EvalReport {
  const suites = results.map((s) => {
    const passed = s.cases.filter((c) => c.pass).length;
    const rate = s.cases.length ? passed / s.cases.length : 1;
    const bar = threshold ?? s.threshold;
    return { ...s, threshold: bar, passed, rate, ok: rate >= bar };
  });
  return {
    suites,
    total: suites.reduce((n, s) => n + s.cases.length, 0),
    passed: suites.reduce((n, s) => n + s.passed, 0),
    ok: suites.every((s) => s.ok),
  };
}

/** The terminal report: one row per case, then why each failed case failed; what a suite or a run wrote is escaped (terminal-text.ts). */
export function table(report: EvalReport): string {
  const rows = report.suites.flatMap((s) =>
    s.cases.map((c) => [
      terminalText(s.file),
      terminalText(c.name),
      c.pass ? "pass" : "FAIL",
      String(c.turns),
      String(c.tokens),
      `$${c.costUsd.toFixed(4)}`,
      `${c.ms}ms`,
    ]),
  );
  const head = ["suite", "case", "result", "turns", "tokens", "cost", "time"];
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cut(cell, widths[i]!))
      .join("  ")
      .trimEnd();
  const failures = report.suites.flatMap((s) => s.cases.filter((c) => !c.pass).map(failureText));
  const verdicts = report.suites.map(
    (s) => `${terminalText(s.file)}: ${s.passed}/${s.cases.length} passed (${pct(s.rate)}; threshold ${pct(s.threshold)}) ${s.ok ? "ok" : "FAILED"}`,
  );
  return [line(head), ...rows.map(line), ...(failures.length ? ["", ...failures] : []), "", ...verdicts].join("\n");
}

function failureText(c: CaseResult): string {
  const failed = c.checks.filter((r) => !r.pass).map((r) => `  ✗ ${terminalText(r.check)}\n${indent(terminalText(r.detail ?? "", true), "      ")}`);
  return [`FAIL ${terminalText(c.suite)} › ${terminalText(c.name)}`, ...failed].join("\n");
}

const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width));
const pct = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
const indent = (text: string, by: string) =>
  text
    .split("\n")
    .map((l) => by + l)
    .join("\n");

/**
 * JUnit XML as CI servers read it (the Ant/Jenkins shape): <testsuites> of one <testsuite>
 * per file with its counts, a <testcase> per case, a <failure> per failed case whose
 * text is every failed check with its diff.
 */
export function junitXml(report: EvalReport, at: Date = new Date(), hostname = "localhost"): string {
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const suiteMs = (s: SuiteResult) => s.cases.reduce((n, c) => n + c.ms, 0);
  const failures = report.total - report.passed;
  const out = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="edgework evals" tests="${report.total}" failures="${failures}" errors="0" time="${seconds(report.suites.reduce((n, s) => n + suiteMs(s), 0))}">`,
  ];
  report.suites.forEach((s, id) => {
    const attrs = {
      name: s.file,
      tests: s.cases.length,
      failures: s.cases.length - s.passed,
      errors: 0,
      skipped: 0,
      time: seconds(suiteMs(s)),
      timestamp: at.toISOString().slice(0, 19),
      hostname,
      id,
      package: "evals",
    };
    out.push(`  <testsuite ${attributes(attrs)}>`, "    <properties/>");
    for (const c of s.cases) {
      const tag = `    <testcase ${attributes({ name: c.name, classname: `${s.file}.${c.worker}`, time: seconds(c.ms) })}`;
      if (c.pass) out.push(`${tag}/>`);
      else {
        const failed = c.checks.filter((r) => !r.pass);
        const message = failed.map((r) => r.check).join(", ");
        const text = failed.map((r) => `${r.check}\n${r.detail ?? ""}`).join("\n\n");
        out.push(`${tag}>`, `      <failure ${attributes({ message, type: "EvalFailure" })}>${escapeXml(text)}</failure>`, "    </testcase>");
      }
    }
    out.push("    <system-out/>", "    <system-err/>", "  </testsuite>");
  });
  out.push("</testsuites>", "");
  return out.join("\n");
}

const attributes = (attrs: Record<string, string | number>) =>
  Object.entries(attrs)
    .map(([k, v]) => `${k}="${escapeXml(String(v))}"`)
    .join(" ");

/** Text and attribute values; characters XML 1.0 cannot hold at all (most C0 controls) are dropped. */
export function escapeXml(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
  );
}

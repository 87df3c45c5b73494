import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { junitProblems, parseXml } from "./junit-shape";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const bin = join(repo, "bin/edgework.mjs");

let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "edgework-evals-"));
  dirs.push(dir);
  return dir;
};

function edgework(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("node", [bin, ...args], { cwd, env: { ...process.env, OPENAI_API_KEY: "" } }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr }),
    );
  });
}

/** A copy of this repository's workers/ and evals/, with the triage prompt no longer asking for the label. */
function brokenPromptProject(): string {
  const dir = tempDir();
  cpSync(join(repo, "workers"), join(dir, "workers"), { recursive: true });
  cpSync(join(repo, "evals"), join(dir, "evals"), { recursive: true });
  const file = join(dir, "workers/triage.worker");
  const prompt = readFileSync(file, "utf8");
  const labelStep = ', and add the\n   label: POST `<issue_url>/labels` with `{"labels": ["<label>"]}`.\n   Both wait';
  expect(prompt).toContain(labelStep);
  writeFileSync(file, prompt.replace(labelStep, ".\n   It waits"));
  return dir;
}

interface Report {
  ok: boolean;
  total: number;
  passed: number;
  suites: Array<{ cases: Array<{ name: string; pass: boolean; checks: Array<{ check: string; pass: boolean; detail?: string }> }> }>;
}

describe("edgework eval: the flagship suite (evals/triage.yaml) with the scripted model", () => {
  it("passes: at least 5 cases against triage and the workers it calls, a table printed, JSON and JUnit written", async () => {
    const out = tempDir();
    const { code, stdout, stderr } = await edgework(repo, "eval", "--json", join(out, "r.json"), "--junit", join(out, "j.xml"));
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(out, "r.json"), "utf8")) as Report;
    expect(report.total).toBeGreaterThanOrEqual(5);
    expect(report).toMatchObject({ ok: true, passed: report.total });
    expect(stdout).toMatch(/^suite\s+case\s+result\s+turns\s+tokens\s+cost\s+time$/m);
    expect(stdout).toContain(`evals/triage.yaml: ${report.total}/${report.total} passed (100%; threshold 100%) ok`);
    expect(junitProblems(parseXml(readFileSync(join(out, "j.xml"), "utf8")))).toEqual([]);
  });

  it("fails on a deliberately broken prompt, with a readable diff, exit code 1 and a JUnit <failure> that validates", async () => {
    const dir = brokenPromptProject();
    const { code, stdout } = await edgework(dir, "eval");
    expect(code).toBe(1);
    // The diff of the output, expected first, and why the label call is missing, with the calls made.
    expect(stdout).toContain(
      "  ✗ output_equals\n      the output differs (- expected, + got):\n      - Commented on acme/app#7 with a summary and labeled it bug.\n      + Commented on acme/app#7 with a summary.",
    );
    expect(stdout).toContain('args.url: "https://api.github.com/repos/acme/app/issues/7/comments" does not match "*/issues/7/labels"');
    expect(stdout).toContain("triage → github_fetch");
    expect(stdout).toContain("test:judge judged it a fail: The report does not say which label was added.");
    expect(stdout).toContain("evals/triage.yaml: 4/5 passed (80%; threshold 100%) FAILED");

    const report = JSON.parse(readFileSync(join(dir, "test-results/evals.json"), "utf8")) as Report;
    const failed = report.suites[0]!.cases.filter((c) => !c.pass);
    expect(failed.map((c) => c.name)).toEqual(["a bug report is summarized, labeled bug, commented on and labeled"]);
    expect(failed[0]!.checks.filter((c) => !c.pass).map((c) => c.check)).toEqual(["tool_called github_fetch", "output_equals", "rubric"]);

    const junit = parseXml(readFileSync(join(dir, "test-results/evals-junit.xml"), "utf8"));
    expect(junitProblems(junit)).toEqual([]);
    const suite = junit.children[0]!;
    expect(suite.attrs).toMatchObject({ name: "evals/triage.yaml", tests: "5", failures: "1" });
    const failure = suite.children.find((c) => c.name === "testcase" && c.children.length)!.children[0]!;
    expect(failure.attrs.message).toBe("tool_called github_fetch, output_equals, rubric");
    // Entities decoded back: the diff reads the same in CI as in the terminal.
    expect(failure.text).toContain('{"method":"POST","url":"*/issues/7/labels","body":"*\\"bug\\"*"}');
    expect(failure.text).toContain("- Commented on acme/app#7 with a summary and labeled it bug.\n+ Commented on acme/app#7 with a summary.");

    // Under a lower bar the same results pass.
    expect((await edgework(dir, "eval", "--threshold", "0.8")).code).toBe(0);
  });

  it("`eval <worker>` runs that worker's cases only; a worker without cases is an error naming it", async () => {
    const dir = brokenPromptProject();
    const labeler = await edgework(dir, "eval", "labeler");
    expect(labeler.code).toBe(0);
    expect(labeler.stdout).toContain("evals/triage.yaml: 1/1 passed");
    const none = await edgework(dir, "eval", "nobody");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no case of worker "nobody" in evals/');
  });

  it("what a suite or a run wrote is printed escaped: no ESC, BEL, C1 or bidi control reaches the terminal", async () => {
    const dir = brokenPromptProject();
    // YAML's \e is ESC, \a BEL, \x9b the C1 CSI: a title, a screen clear and a colour; U+202E reverses the line.
    writeFileSync(
      join(dir, "evals/hostile.yaml"),
      [
        "worker: labeler",
        "cases:",
        '  - name: "evil \\e]0;pwned\\a\\e[2J\\x9b31m\\u202Eeman"',
        "    input: { title: t }",
        "    script:",
        `      labeler: [{ text: '{"label": "bug", "reason": "\\u001b[31mred \\u009b1m"}' }]`,
        "    checks:",
        '      - output_equals: { label: docs, reason: "\\e]52;c;Y29weQ==\\a" }',
      ].join("\n"),
    );
    const run = await edgework(dir, "eval", "labeler");
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("evil \\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eeman");
    expect(run.stdout).toContain("\\u001b[31mred");
    expect(run.stdout).toContain("\\u001b]52;c;Y29weQ==\\u0007");

    // A suite's problem quotes its key: escaped too.
    writeFileSync(join(dir, "evals/hostile.yaml"), ["worker: labeler", "cases:", '  - { name: x, input: {}, "\\e[2Jkey": 1 }'].join("\n"));
    const bad = await edgework(dir, "eval", "labeler");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("\\u001b[2Jkey");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what must not be printed.
    const raw = /[\u001b\u0007\u0080-\u009f\u202e]/;
    for (const out of [run.stdout, run.stderr, bad.stdout, bad.stderr]) expect(out).not.toMatch(raw);
  });

  it("a suite file's problems name the file and the field; nothing runs", async () => {
    const dir = brokenPromptProject();
    writeFileSync(
      join(dir, "evals/bad.yaml"),
      [
        "worker: triage",
        "cases:",
        "  - name: two checks in one",
        "    input: {}",
        "    checks:",
        "      - { max_turns: 2, max_tokens: 10 }",
        "      - { tool_called: { name: x, args: {}, extra: 1 } }",
        "    script:",
        "      triage: [{ if_asked: x, text: y }]",
      ].join("\n"),
    );
    const { code, stderr } = await edgework(dir, "eval");
    expect(code).toBe(1);
    expect(stderr).toContain("evals/bad.yaml: cases.0.checks.0: a check is one of status, output_schema");
    expect(stderr).toContain("got max_turns, max_tokens");
    expect(stderr).toContain("evals/bad.yaml: cases.0.checks.1.tool_called.extra: unknown key");
    expect(stderr).toContain("evals/bad.yaml: cases.0.script.triage.0: if_asked and otherwise go together");
  });
});

import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { doctor } from "../../cli/doctor.mjs";

/**
 * Review (issue 29): `edgework doctor` prints what a project's files say — worker files'
 * approval addresses, trigger names and addresses, the Worker's name — as they are. A
 * project someone else wrote (a cloned repository, a pull request under review) can then
 * write terminal escape sequences to whoever runs the doctor: retitle or clear the
 * terminal, rewrite what the report shows (a "No problem found" over its problems), or
 * hide a line. `edgework eval` escapes the same kind of text (src/evals/terminal-text.ts).
 */

const root = fileURLToPath(new URL("../..", import.meta.url));
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the test looks for.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("review2: edgework doctor on a hostile project", { timeout: 30_000 }, () => {
  it("writes no control character from the project's files to the terminal (ESC in an approval address, a trigger's name and address)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgework-review2-doctor-"));
    made.push(dir);
    cpSync(join(root, "workers"), join(dir, "workers"), { recursive: true });
    writeFileSync(join(dir, "wrangler.toml"), readFileSync(join(root, "create-edgework/template/wrangler.toml"), "utf8"));
    // YAML's "\e" is ESC: OSC 0 retitles the window, CSI 2J clears the screen, CSI 1A moves up a line.
    writeFileSync(
      join(dir, "workers/hostile.worker"),
      '---\nname: hostile\napproval:\n  notify: "\\e]0;pwned\\a\\e[2J\\e[1Aann@example.com"\n---\nDo nothing.\n',
    );
    writeFileSync(
      join(dir, "workers/triggers.yaml"),
      `${readFileSync(join(dir, "workers/triggers.yaml"), "utf8")}\n"sup\\e[8mport":\n  worker: triage\n  email: { to: "help\\e[2K@agents.example.com", allow_from: ["*@example.com"], reply: true }\n`,
    );
    const { lines } = await doctor({ project: dir, args: [], env: {} });
    const text = lines.join("\n");
    // The report does name them (so the test reads what reaches the terminal)...
    expect(text).toMatch(/ann@example\.com/);
    expect(text).toMatch(/email trigger sup/);
    // ...but never as control characters.
    expect(text).not.toMatch(CONTROL);
  });
});

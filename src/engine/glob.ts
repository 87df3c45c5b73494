/**
 * Minimal globs: `*` matches any run of characters except `/` (anything at all
 * when `slashes` is false), `**` any run including `/` (and `**` then `/` matches
 * nothing or any run ending in `/`), `?` one character (not `/` when `slashes`);
 * all else is literal (with `escapes`, `\*`, `\?` and `\\` are the character itself).
 * Characters are UTF-16 code units, as in a JS regex.
 *
 * Globs can come from a model (`list_files`), so no regex is built from them: a
 * backtracking regex of many stars runs for minutes. The matcher walks the
 * glob's positions as a set of states, O(text length × glob length) at worst.
 */
export interface GlobOptions {
  ignoreCase?: boolean;
  /** `*` and `?` stop at `/` (paths); else they match any character. */
  slashes?: boolean;
  /** A backslash before `*`, `?` or `\` makes it literal (eval argument patterns); else `\` is literal. */
  escapes?: boolean;
}

/** The characters a backslash escapes under `escapes`. */
export const ESCAPED = new Set(["*", "?", "\\"]);

/** Longer globs are refused: the walk is linear in the text but also in the glob. */
export const MAX_GLOB_LENGTH = 256;

type Token =
  | { t: "char"; c: string }
  | { t: "one" } // ?
  | { t: "star" } // *: stays on any character (but `/` when slash-sensitive)
  | { t: "any" } // **: stays on any character
  | { t: "skip"; to: number }; // reads nothing; goes on to the next position or jumps to `to`

function tokenize(glob: string, escapes: boolean): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (escapes && c === "\\" && ESCAPED.has(glob[i + 1]!)) tokens.push({ t: "char", c: glob[++i]! });
    else if (c === "?") tokens.push({ t: "one" });
    else if (c !== "*") tokens.push({ t: "char", c });
    else {
      let end = i;
      while (glob[end + 1] === "*") end++;
      const double = end > i;
      i = end;
      if (!double) tokens.push({ t: "star" });
      else if (glob[i + 1] === "/") {
        // `**/` is `(**/)?`: skip the whole group, or a run of anything then `/`.
        i++;
        tokens.push({ t: "skip", to: tokens.length + 3 }, { t: "any" }, { t: "char", c: "/" });
      } else tokens.push({ t: "any" });
    }
  }
  return tokens;
}

/** A predicate for `glob`; throws a RangeError naming the limit if the glob is over MAX_GLOB_LENGTH. */
export function globMatcher(glob: string, opts: GlobOptions = {}): (text: string) => boolean {
  if (glob.length > MAX_GLOB_LENGTH) throw new RangeError(`glob is ${glob.length} characters long; at most ${MAX_GLOB_LENGTH} are allowed`);
  const fold = (s: string) => (opts.ignoreCase ? s.toLowerCase() : s);
  const tokens = tokenize(fold(glob), opts.escapes === true);
  const m = tokens.length;
  const stops = (c: string) => opts.slashes === true && c === "/";

  /** Adds the positions reachable without reading a character (stars may match nothing); all edges go forward. */
  const close = (states: Uint8Array) => {
    for (let i = 0; i < m; i++) {
      if (!states[i]) continue;
      const tok = tokens[i]!;
      if (tok.t === "star" || tok.t === "any" || tok.t === "skip") states[i + 1] = 1;
      if (tok.t === "skip") states[tok.to] = 1;
    }
  };

  return function matches(input: string): boolean {
    const text = fold(input);
    let now = new Uint8Array(m + 1);
    let next = new Uint8Array(m + 1);
    now[0] = 1;
    close(now);
    for (let k = 0; k < text.length; k++) {
      const c = text[k]!;
      next.fill(0);
      let alive = false;
      for (let i = 0; i < m; i++) {
        if (!now[i]) continue;
        const tok = tokens[i]!;
        let stay = false;
        let advance = false;
        switch (tok.t) {
          case "char":
            advance = tok.c === c;
            break;
          case "one":
            advance = !stops(c);
            break;
          case "star":
            stay = !stops(c);
            break;
          case "any":
            stay = true;
            break;
          case "skip":
            break;
        }
        if (stay) next[i] = 1;
        if (advance) next[i + 1] = 1;
        alive ||= stay || advance;
      }
      if (!alive) return false;
      close(next);
      [now, next] = [next, now];
    }
    return now[m] === 1;
  };
}

export const isGlob = (s: string) => /[*?]/.test(s);

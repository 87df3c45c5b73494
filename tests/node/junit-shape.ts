// The JUnit XML shape CI servers read (the Ant/Jenkins junit XSD), checked without
// the internet or an XML library: a small parser for the XML edgework writes (elements,
// attributes, text, the five predefined entities) and the XSD's rules as code.
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decode(text: string, where: string): string {
  return text.replace(/&([^;&<]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(";") || !(name in ENTITIES)) throw new Error(`${where}: a bare & or unknown entity "${whole}"`);
    return ENTITIES[name]!;
  });
}

/** Parses one document: a declaration, then one root element; throws on anything malformed. */
export function parseXml(xml: string): XmlElement {
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>\n/.exec(xml);
  if (!decl) throw new Error("no XML declaration");
  let at = decl[0].length;
  const stack: XmlElement[] = [{ name: "#document", attrs: {}, children: [], text: "" }];
  const tag = /<(\/?)([A-Za-z][\w.-]*)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>/y;
  while (at < xml.length) {
    const lt = xml.indexOf("<", at);
    const text = xml.slice(at, lt < 0 ? xml.length : lt);
    if (text.includes("]]>")) throw new Error(`]]> in text at ${at}`);
    stack.at(-1)!.text += decode(text, `text at ${at}`);
    if (lt < 0) break;
    tag.lastIndex = lt;
    const m = tag.exec(xml);
    if (!m) throw new Error(`malformed tag at ${lt}: ${xml.slice(lt, lt + 40)}`);
    const [, closing, name, attrText, selfClosing] = m;
    if (closing) {
      const open = stack.pop()!;
      if (open.name !== name) throw new Error(`</${name}> closes <${open.name}>`);
    } else {
      const attrs: Record<string, string> = {};
      for (const a of attrText!.matchAll(/([\w.-]+)="([^"]*)"/g)) {
        if (a[1]! in attrs) throw new Error(`<${name}>: attribute ${a[1]} twice`);
        attrs[a[1]!] = decode(a[2]!, `<${name} ${a[1]}>`);
      }
      const el = { name: name!, attrs, children: [], text: "" };
      stack.at(-1)!.children.push(el);
      if (!selfClosing) stack.push(el);
    }
    at = tag.lastIndex;
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  const [root, ...more] = stack[0]!.children;
  if (!root || more.length || stack[0]!.text.trim()) throw new Error("a document has exactly one root element");
  return root;
}

const INT = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;
/** xs:dateTime as the XSD's ISO8601_DATETIME_PATTERN: no time zone. */
const DATETIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/;

function attributes(el: XmlElement, required: Record<string, RegExp>, optional: Record<string, RegExp> = {}): string[] {
  const problems: string[] = [];
  for (const [name, pattern] of Object.entries(required)) {
    if (!(name in el.attrs)) problems.push(`<${el.name}> lacks required attribute ${name}`);
    else if (!pattern.test(el.attrs[name]!)) problems.push(`<${el.name} ${name}="${el.attrs[name]}"> is not ${pattern}`);
  }
  for (const name of Object.keys(el.attrs)) {
    const pattern = optional[name];
    if (!(name in required) && !pattern) problems.push(`<${el.name}> has unknown attribute ${name}`);
    else if (pattern && !pattern.test(el.attrs[name]!)) problems.push(`<${el.name} ${name}="${el.attrs[name]}"> is not ${pattern}`);
  }
  return problems;
}

const ANY = /^[\s\S]*$/;
const TOKEN = /^\S(.*\S)?$/;

/** Every way `root` departs from the junit XSD (testsuites → testsuite → properties, testcase*, system-out, system-err). */
export function junitProblems(root: XmlElement): string[] {
  const problems: string[] = [];
  if (root.name !== "testsuites") return [`the root is <${root.name}>, not <testsuites>`];
  problems.push(...attributes(root, {}, { name: ANY, tests: INT, failures: INT, errors: INT, time: DECIMAL, disabled: INT }));
  for (const suite of root.children) {
    if (suite.name !== "testsuite") {
      problems.push(`<testsuites> holds <${suite.name}>`);
      continue;
    }
    problems.push(
      ...attributes(
        suite,
        { name: TOKEN, timestamp: DATETIME, hostname: TOKEN, tests: INT, failures: INT, errors: INT, time: DECIMAL, id: INT, package: TOKEN },
        { skipped: INT },
      ),
    );
    const order = suite.children.map((c) => c.name).join(" ");
    if (!/^properties( testcase)* system-out system-err$/.test(order)) problems.push(`<testsuite> children out of the XSD's sequence: ${order}`);
    const cases = suite.children.filter((c) => c.name === "testcase");
    for (const tc of cases) {
      problems.push(...attributes(tc, { name: TOKEN, classname: TOKEN, time: DECIMAL }));
      if (tc.children.length > 1) problems.push(`<testcase name="${tc.attrs.name}"> has ${tc.children.length} children; at most one failure or error`);
      for (const f of tc.children) {
        if (f.name !== "failure" && f.name !== "error") problems.push(`<testcase> holds <${f.name}>`);
        problems.push(...attributes(f, { type: TOKEN }, { message: ANY }));
      }
    }
    const failures = cases.filter((c) => c.children.some((f) => f.name === "failure")).length;
    if (Number(suite.attrs.tests) !== cases.length) problems.push(`tests="${suite.attrs.tests}" but ${cases.length} <testcase>`);
    if (Number(suite.attrs.failures) !== failures) problems.push(`failures="${suite.attrs.failures}" but ${failures} <failure>`);
  }
  return problems;
}

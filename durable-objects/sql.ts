type Row = Record<string, SqlStorageValue>;

/**
 * JSON text in a column, typed by what it holds: `parse` gives that type back.
 * (Only a type: the value is the string SQLite stores.)
 */
export type JsonText<T> = string & { readonly __json?: T };

/** SQL text the code itself wrote (never a value): a template splices it in as is. */
export class RawSql {
  constructor(readonly text: string) {}
}
export const raw = (text: string) => new RawSql(text);

/** The query text and its bound values: each value a `?`, each RawSql its text. */
function compose(strings: TemplateStringsArray, values: unknown[]): [query: string, bound: unknown[]] {
  let query = strings[0]!;
  const bound: unknown[] = [];
  values.forEach((v, i) => {
    if (v instanceof RawSql) query += v.text;
    else {
      query += "?";
      bound.push(v);
    }
    query += strings[i + 1]!;
  });
  return [query, bound];
}

/**
 * SQL through tagged templates: every interpolated value is a bound parameter
 * (only a RawSql fragment is spliced), failures name the query, and rows
 * read/written are counted (for cost reports). A query names its row type
 * (`sql.one<RunRow>\`…\``, declared once per table in rows.ts): the one place a
 * row's shape is asserted rather than checked, so callers read typed fields.
 */
export class Sql {
  rowsRead = 0;
  rowsWritten = 0;

  constructor(private readonly storage: SqlStorage) {}

  all<T extends object = Row>(strings: TemplateStringsArray, ...values: unknown[]): T[] {
    return this.exec<T>(...compose(strings, values));
  }

  one<T extends object = Row>(strings: TemplateStringsArray, ...values: unknown[]): T | undefined {
    return this.exec<T>(...compose(strings, values))[0];
  }

  run(strings: TemplateStringsArray, ...values: unknown[]): void {
    this.exec(...compose(strings, values));
  }

  /** For statements without parameters (schema). */
  script(query: string): void {
    this.exec(query, []);
  }

  private exec<T extends object>(query: string, values: unknown[]): T[] {
    try {
      const cursor = this.storage.exec(query, ...values);
      const rows = cursor.toArray() as unknown as T[];
      this.rowsRead += cursor.rowsRead;
      this.rowsWritten += cursor.rowsWritten;
      return rows;
    } catch (err) {
      throw new Error(`SQL failed: ${(err as Error).message}\n  in: ${query.replace(/\s+/g, " ").trim()}`);
    }
  }
}

export const json = (v: unknown) => JSON.stringify(v ?? null);
/** The value of a JSON column (null for SQL NULL). */
export const parse = <T = unknown>(v: JsonText<T> | SqlStorageValue | undefined): T => (typeof v === "string" ? JSON.parse(v) : null) as T;

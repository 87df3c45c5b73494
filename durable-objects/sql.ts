type Row = Record<string, SqlStorageValue>;

/**
 * SQL through tagged templates: every interpolated value is a bound parameter,
 * failures name the query, and rows read/written are counted (for cost reports).
 */
export class Sql {
  rowsRead = 0;
  rowsWritten = 0;

  constructor(private readonly storage: SqlStorage) {}

  all<T extends Row = Row>(strings: TemplateStringsArray, ...values: unknown[]): T[] {
    return this.exec<T>(strings.join("?"), values);
  }

  one<T extends Row = Row>(strings: TemplateStringsArray, ...values: unknown[]): T | undefined {
    return this.exec<T>(strings.join("?"), values)[0];
  }

  run(strings: TemplateStringsArray, ...values: unknown[]): void {
    this.exec(strings.join("?"), values);
  }

  /** For statements without parameters (schema). */
  script(query: string): void {
    this.exec(query, []);
  }

  private exec<T extends Row>(query: string, values: unknown[]): T[] {
    try {
      const cursor = this.storage.exec<T>(query, ...values);
      const rows = cursor.toArray();
      this.rowsRead += cursor.rowsRead;
      this.rowsWritten += cursor.rowsWritten;
      return rows;
    } catch (err) {
      throw new Error(`SQL failed: ${(err as Error).message}\n  in: ${query.replace(/\s+/g, " ").trim()}`);
    }
  }
}

export const json = (v: unknown) => JSON.stringify(v ?? null);
export const parse = <T = unknown>(v: SqlStorageValue | undefined): T => (typeof v === "string" ? JSON.parse(v) : null) as T;

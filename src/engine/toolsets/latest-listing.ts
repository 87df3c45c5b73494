/**
 * A toolset's latest listing, kept as a plain value once it is in so that every tool
 * call can look a name up without waiting. Listing again replaces it (a list may grow:
 * created workers); an older listing that finishes late never overwrites a newer one.
 */
export class LatestListing<T> {
  private value: T | undefined;
  private pending: Promise<T> | undefined;

  constructor(private readonly load: () => Promise<T>) {}

  /** The listing in hand, if the last one started has come in. */
  get current(): T | undefined {
    return this.value;
  }

  /** Lists again; until this one is in, `current` is empty. */
  refresh(): Promise<T> {
    this.value = undefined;
    const p = (this.pending = this.load().then((v) => {
      if (this.pending === p) this.value = v;
      return v;
    }));
    return p;
  }

  /** The listing in hand, else the one under way, else a new one. */
  async get(): Promise<T> {
    return this.value ?? (await (this.pending ?? this.refresh()));
  }
}

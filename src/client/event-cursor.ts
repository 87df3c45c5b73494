/**
 * Where a reconnect resumes. The server's event id is a cursor after a journal
 * step, and one step can give several events with the same id (`call` and
 * `turn`): resuming after that id would skip the rest of a group cut off midway.
 * So a reconnect asks from the cursor before the group and drops the events of
 * the group it already delivered.
 */
export class EventCursor {
  /** The cursor before the current group (the caller's `lastEventId` at first). */
  private before: string | undefined;
  private group: string | undefined;
  private delivered = 0;
  private replayed = 0;

  constructor(lastEventId: string | undefined) {
    this.before = lastEventId;
  }

  /** Last-Event-ID for the next connection (the first too); the current group's delivered events will be dropped once. */
  connect(): string | undefined {
    this.replayed = this.delivered;
    return this.before;
  }

  /** Whether an event is new (deliver it) or a repeat of one already delivered. */
  admit(id: string | null): boolean {
    if (id === null) return true; // not persisted (model_delta): never repeated by the cursor
    if (id === this.group) {
      if (this.replayed > 0) {
        this.replayed--;
        return false;
      }
      this.delivered++;
      return true;
    }
    if (this.group !== undefined) this.before = this.group;
    this.group = id;
    this.delivered = 1;
    this.replayed = 0;
    return true;
  }
}

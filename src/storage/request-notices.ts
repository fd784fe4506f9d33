/** When a pending request's reminder and expiring notice are due. */
export interface NoticeRow {
  requestId: string;
  /** Unix ms of the next `request.reminder`, null for none. */
  remindAt: number | null;
  /** Unix ms of `request.expiring`, null for none (or already sent). */
  expiringAt: number | null;
}

export interface NoticeReads {
  /** The earliest due notice, or null. */
  nextDue(): Promise<number | null>;
}

export interface NoticeRecords extends NoticeReads {
  /** Schedules a new request's notices (nothing when both are null). */
  schedule(row: NoticeRow): Promise<void>;
  /** Notices due at `now`, claimed for this transaction: another daemon skips them. */
  claimDue(now: number, limit: number): Promise<NoticeRow[]>;
  /** Stores the next due times; a row with neither is removed. */
  update(row: NoticeRow): Promise<void>;
  /** Drops a request's notices (it has ended). */
  remove(requestId: string): Promise<void>;
  /**
   * Gives every pending request without a next reminder one (reminders turned on since it was
   * created): its creation plus the first multiple of `everyMs` after `now`, when that is before
   * its deadline. Returns how many it scheduled.
   */
  remindPending(now: number, everyMs: number): Promise<number>;
}

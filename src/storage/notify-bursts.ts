/** Burst windows per hook and source, shared by every daemon on the store. */
export interface BurstWindow {
  hook: string;
  /** `source.agent`, or `unknown`. */
  agent: string;
  /** `source.session`, or '' when the request has none. */
  session: string;
  /** Unix ms; at or before now means no window is open. */
  windowEnd: number;
  sent: number;
  held: number;
  latestRequestId: string | null;
}

export interface BurstReads {
  /** The earliest end of a window that holds notifications back (its summary is due then), or null. */
  nextSummaryAt(): Promise<number | null>;
}

export interface BurstRecords extends BurstReads {
  /**
   * The window of (hook, agent, session), created empty when there is none, and held for this
   * transaction: another daemon counting for the same source waits for it to commit.
   */
  lock(hook: string, agent: string, session: string): Promise<BurstWindow>;
  save(window: BurstWindow): Promise<void>;
  /** Windows ended by `now` with notifications held back, claimed: another daemon skips them. */
  claimEnded(now: number, limit: number): Promise<BurstWindow[]>;
}

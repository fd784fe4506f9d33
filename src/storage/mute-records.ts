/** Muted sources: a muted source sends no notifications. */
export interface MuteRow {
  id: string;
  /** null: any agent. */
  agent: string | null;
  /** null: any session. */
  session: string | null;
  dismiss_notices: boolean;
  created_at: number;
  /** null: until removed. */
  expires_at: number | null;
}

export interface MuteReads {
  /** Mutes in force at `now`, oldest first. */
  active(now: number): Promise<MuteRow[]>;
}

export interface MuteRecords extends MuteReads {
  insert(mute: MuteRow): Promise<void>;
  /** Removes a mute; undefined when there is none with that id. */
  remove(id: string): Promise<MuteRow | undefined>;
}

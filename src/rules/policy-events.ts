import type { AutoModeName } from '../policy/auto-mode.js';

/** Auto mode as answered by `GET /v1/auto` and carried by `auto.changed`. */
export interface AutoView {
  mode: AutoModeName;
  /** Unix ms when it turns itself off; null when it stays until changed. */
  until: number | null;
  set_at: number | null;
  set_by: string | null;
}

export type PolicyEvent = { type: 'rules.changed'; remote?: true } | { type: 'auto.changed'; auto: AutoView; remote?: true };

export type PolicyEventListener = (event: PolicyEvent) => void;

/**
 * In-process fan-out of committed policy changes (rules added, removed or expired, auto mode
 * switched), for `/v1/events` subscribers and this daemon's auto-mode and rule-expiry timers.
 * Emitted after commit only; changes made on other daemons arrive through the store
 * (`remote: true`).
 */
export class PolicyEvents {
  #listeners = new Set<PolicyEventListener>();

  on(listener: PolicyEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: PolicyEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not stop the others.
      }
    }
  }
}

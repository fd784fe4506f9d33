import type { HandupRequest } from '../requests/request-schema.js';

/**
 * Committed notification changes other than request transitions, for `/v1/events` and the
 * workers in this daemon: mutes changed, a reminder or expiring notice went out, deliveries or
 * notices were queued. Emitted after commit, here or (through the store) on another daemon.
 */
export type NotifyEvent =
  | { type: 'mutes.changed' }
  | { type: 'request.reminder' | 'request.expiring'; request: HandupRequest; format: string }
  | { type: 'deliveries.queued' }
  | { type: 'notices.scheduled'; at: number | null };

export type NotifyEventListener = (event: NotifyEvent) => void;

export class NotifyEvents {
  #listeners = new Set<NotifyEventListener>();

  on(listener: NotifyEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: NotifyEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // Listeners log their own failures; one must not stop the others.
      }
    }
  }
}

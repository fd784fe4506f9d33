import type { HandupRequest } from './request-schema.js';

export type RequestEventType = 'request.created' | 'request.decided' | 'request.expired' | 'request.cancelled';

export interface RequestEvent {
  type: RequestEventType;
  request: HandupRequest;
  format: string;
  /** Set when another daemon on the same store made the change (heard through the store). */
  remote?: true;
  /**
   * On `request.created`: a deny rule matched but could not decide it (a question, no deny
   * option), so it waits for a person: no decide hook may approve what the operator refused.
   */
  forPerson?: true;
  /** On `request.created`: options only a person may choose (a grant for the whole session). */
  personOnly?: readonly string[];
}

export type RequestEventListener = (event: RequestEvent) => void;

/**
 * In-process fan-out of committed state changes. Emitted only after the transaction commits,
 * so a listener never sees a change that could still roll back.
 */
export class RequestEvents {
  #listeners = new Set<RequestEventListener>();

  on(listener: RequestEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: RequestEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A broken listener must not stop the others; listeners log their own failures.
      }
    }
  }
}

import type { Status } from '../requests/request-schema.js';

/**
 * handup's exit codes, for the commands that end on a request (ask, wait, show, approve, deny,
 * answer, cancel): a script can branch on the outcome without parsing output.
 */
export const EXIT_OK = 0;
export const EXIT_ERROR = 4;

const BY_STATUS: Record<Status, number> = {
  pending: 0,
  approved: 0,
  answered: 0,
  dismissed: 0,
  denied: 1,
  expired: 2,
  cancelled: 3,
};

export function exitCodeForStatus(status: Status): number {
  return BY_STATUS[status];
}

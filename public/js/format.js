/** Human-readable times, durations and sizes. */

const pad = (n) => String(n).padStart(2, '0');

/** "45s", "4m 05s", "2h 10m", "3d 4h": two units at most, enough to judge urgency. */
export function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${pad(s % 60)}s`;
  const hr = Math.floor(m / 60);
  if (hr < 24) return `${hr}h ${pad(m % 60)}m`;
  return `${Math.floor(hr / 24)}d ${hr % 24}h`;
}

/** Time left until `expiresAt`, or null for requests that never expire. */
export function timeLeft(expiresAt, now = Date.now()) {
  if (expiresAt == null) return null;
  const ms = expiresAt - now;
  return ms <= 0 ? 'expiring…' : `${duration(ms)} left`;
}

/** How urgent a deadline is, for colour: under a minute is urgent, under ten minutes soon. */
export function urgency(expiresAt, now = Date.now()) {
  if (expiresAt == null) return 'none';
  const ms = expiresAt - now;
  return ms < 60_000 ? 'urgent' : ms < 600_000 ? 'soon' : 'later';
}

export function ago(ts, now = Date.now()) {
  const s = Math.round((now - ts) / 1000);
  if (s < 10) return 'just now';
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const hr = Math.floor(m / 60);
  if (hr < 24) return `${hr}h ago`;
  return `${Math.floor(hr / 24)}d ago`;
}

export function dateTime(ts) {
  return new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function bytes(n) {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export const STATUS_LABEL = {
  pending: 'Pending',
  approved: 'Approved',
  denied: 'Denied',
  answered: 'Answered',
  dismissed: 'Dismissed',
  expired: 'Expired',
  cancelled: 'Cancelled',
};

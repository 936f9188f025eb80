/** How the panels show times, durations and JSON values. */
import { html, type Html } from '../html.js';

/** Store time as UTC, to the second. */
export function timeText(ms: number | null): string {
  if (ms === null) return '—';
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

/** "12 s", "4 min 3 s", "2 h 5 min"; expired leases say so. */
export function leaseLeft(leaseExpiresAt: number | null, now: number): Html {
  if (leaseExpiresAt === null) return html`<span class="muted">no expiry</span>`;
  const left = leaseExpiresAt - now;
  if (left <= 0) return html`<span class="warn">expired</span>`;
  const seconds = Math.ceil(left / 1000);
  if (seconds < 60) return html`${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return html`${minutes} min ${seconds % 60} s`;
  return html`${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const MAX_JSON_CHARS = 400;

/** A JSON value as text, cut short when long. */
export function jsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > MAX_JSON_CHARS ? `${text.slice(0, MAX_JSON_CHARS)}…` : text;
}

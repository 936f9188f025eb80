/**
 * How a client honours a rate limit: an answer 429 changed nothing, so the same request (a commit
 * included) is sent again once the answer says it fits, never settled or abandoned because of it.
 * Each wait is what the answer asks: fencegate's `details.retryAfterMs`, else the standard
 * `Retry-After` header (seconds, or an HTTP date), which is all a proxy or an API gateway with a
 * rate limit of its own sends; at least MIN_WAIT_MS and at most MAX_WAIT_MS. Past `budgetMs` since
 * the first send of one exchange, the 429 is its answer: rate_limited, nothing changed.
 */
import type { Reply } from './transport.js';

/** The longest single wait, whatever the server asks. */
export const MAX_WAIT_MS = 10_000;
/**
 * The shortest: an answer that asks for no wait (`Retry-After: 0`, a date already past) is not
 * sent again at once, so a broken or hostile proxy cannot make the client spin.
 */
export const MIN_WAIT_MS = 50;
/** The time one exchange may take in all while rate limited, by default. */
export const DEFAULT_RATE_LIMIT_BUDGET_MS = 60_000;

/**
 * The wait a reply asks for, or null when it is not a 429 that says when to come back: fencegate's
 * rate_limited (a second when its body gives no number and there is no header), or any 429 with a
 * Retry-After the client can read. `now` is the time an HTTP date is counted from.
 */
export function rateLimitWaitMs(reply: Reply, now?: number): number | null {
  if (reply.status !== 429) return null;
  const error = (reply.body as { error?: { code?: unknown; details?: unknown } } | null)?.error;
  const ours = error?.code === 'rate_limited';
  // The body says it to the millisecond; Retry-After in whole seconds or to the second.
  const asked = ours
    ? (error.details as { retryAfterMs?: unknown } | undefined)?.retryAfterMs
    : null;
  const ms =
    typeof asked === 'number' && Number.isFinite(asked) && asked >= 0
      ? asked
      : (retryAfterMs(reply.retryAfter, now ?? Date.now()) ?? (ours ? 1000 : null));
  return ms === null ? null : Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, ms));
}

/**
 * The wait a Retry-After header asks for (RFC 9110, 10.2.3): delay-seconds, or an HTTP date
 * (a date already past: 0). null when absent or neither.
 */
export function retryAfterMs(header: string | undefined, now: number): number | null {
  if (header === undefined) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month; Date.parse alone would take "1.5" for a date too.
  const at = /[A-Za-z]/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Sends with `send` until it is not rate limited, or `budgetMs` since the first send is spent. */
export async function pastRateLimit<R extends Reply>(
  send: () => Promise<R>,
  budgetMs: number,
): Promise<R> {
  // The budget is the time since the first send, the exchanges included, not the waits alone;
  // on a clock that never steps, so a corrected wall clock neither stretches nor cuts it.
  const started = performance.now();
  for (;;) {
    const reply = await send();
    const wait = rateLimitWaitMs(reply);
    if (wait === null) return reply;
    // A little jitter, so the callers refused together do not all come back at one instant.
    const ms = wait + Math.random() * Math.min(50, wait);
    if (performance.now() - started + ms > budgetMs) return reply;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

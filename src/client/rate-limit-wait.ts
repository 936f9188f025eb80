/**
 * How a client honours the server's per-tenant rate: an answer 429 rate_limited changed nothing,
 * so the same request (a commit included) is sent again once the server says it fits, never
 * settled or abandoned because of it. Each wait is what the answer asks (`details.retryAfterMs`),
 * at most MAX_WAIT_MS; past `budgetMs` of waiting in one call, the
 * 429 is the call's answer: rate_limited, nothing changed.
 */
import type { Reply } from './transport.js';

/** The longest single wait, whatever the server asks. */
export const MAX_WAIT_MS = 10_000;
/** The waiting one call may do in all by default. */
export const DEFAULT_RATE_LIMIT_BUDGET_MS = 60_000;

/** The wait a reply asks for, or null when it is not a rate_limited answer. */
export function rateLimitWaitMs(reply: Reply): number | null {
  if (reply.status !== 429) return null;
  const error = (reply.body as { error?: { code?: unknown; details?: unknown } } | null)?.error;
  if (error?.code !== 'rate_limited') return null;
  // The body says it in milliseconds; Retry-After, in whole seconds, is for other HTTP clients.
  const asked = (error.details as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  const ms = typeof asked === 'number' && Number.isFinite(asked) ? asked : 1000;
  return Math.min(MAX_WAIT_MS, Math.max(1, ms));
}

/** Sends with `send` until it is not rate limited or `budgetMs` of waiting is spent. */
export async function pastRateLimit<R extends Reply>(
  send: () => Promise<R>,
  budgetMs: number,
): Promise<R> {
  let waited = 0;
  for (;;) {
    const reply = await send();
    const wait = rateLimitWaitMs(reply);
    if (wait === null || waited + wait > budgetMs) return reply;
    // A little jitter, so the callers refused together do not all come back at one instant.
    const ms = wait + Math.random() * Math.min(50, wait);
    waited += ms;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

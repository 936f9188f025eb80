/** The pause before a client's next attempt. */
const MAX_BACKOFF_MS = 1_000;

/** Exponential backoff with jitter: about 50, 100, 200 ms …, at most 1 s. */
export function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(MAX_BACKOFF_MS, 25 * 2 ** attempt);
  const ms = ceiling / 2 + Math.random() * (ceiling / 2);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

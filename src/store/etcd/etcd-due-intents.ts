/**
 * What a claim reads on etcd: about what it can take, however many intents are open. Each open
 * intent has a small head under `io/` (its status, due times and target, written in the same Txn
 * as the intent, so with the same mod_revision). A claim reads the heads, picks the due ones in
 * claim order up to its limit, and then reads the intents themselves, payloads and all, a few at a
 * time, only until its byte budget is spent. The Txn that claims compares the intents it read at
 * the revisions it read them, so a concurrent change of exactly those intents re-plans the claim.
 */
import { itemsWithinBudget } from '../../core/answer-budget.js';
import { intentBytes } from '../../core/intent-page.js';
import { isClaimable } from '../../core/intent-rules.js';
import { compareClaimOrder } from '../../core/plan/plan-intents.js';
import type { Intent } from '../../types.js';

/** Intents whose values one read fetches: a value may hold a 256 KiB payload. */
export const DUE_INTENTS_PER_READ = 16;

/**
 * The fields of an intent a claim chooses by. The head written for an open intent holds only
 * these; one written before heads existed is the whole intent, which holds them too.
 */
export type IntentHead = Pick<
  Intent,
  'status' | 'claimFence' | 'claimExpiresAt' | 'nextAttemptAt' | 'createdAt' | 'target'
>;

export function intentHead(intent: Intent): IntentHead {
  const { status, claimFence, claimExpiresAt, nextAttemptAt, createdAt, target } = intent;
  return { status, claimFence, claimExpiresAt, nextAttemptAt, createdAt, target };
}

export interface DueQuery {
  at: number;
  limit: number;
  targets: string[] | null;
  maxBytes: number;
}

/** The effect keys of the heads due at `due.at`, in claim order, at most `due.limit`. */
export function dueCandidates(
  heads: readonly { effectKey: string; head: IntentHead }[],
  due: DueQuery,
): string[] {
  const targets = due.targets === null ? null : new Set(due.targets);
  return heads
    .filter(({ head }) => isClaimable(head, due.at))
    .filter(({ head }) => targets === null || targets.has(head.target))
    .map(({ effectKey, head }) => ({ ...head, effectKey }))
    .sort(compareClaimOrder)
    .slice(0, due.limit)
    .map(({ effectKey }) => effectKey);
}

/**
 * Reads the candidates' intents in claim order, `DUE_INTENTS_PER_READ` at a time, until the
 * claim's budget holds no more of them: the effect keys read. An intent counts as it would once
 * claimed at the least (claimed by nobody), so the plan never wants one that was not read.
 */
export async function readWithinBudget(
  candidates: readonly string[],
  due: DueQuery,
  read: (effectKeys: string[]) => Promise<(Intent | null)[]>,
): Promise<string[]> {
  const taken: string[] = [];
  const sizes: number[] = [];
  for (let start = 0; start < candidates.length; start += DUE_INTENTS_PER_READ) {
    const chunk = candidates.slice(start, start + DUE_INTENTS_PER_READ);
    const intents = await read(chunk);
    for (const [index, intent] of intents.entries()) {
      // Gone since its head was read (delivered meanwhile): the plan skips it.
      if (intent === null) continue;
      taken.push(chunk[index] ?? '');
      sizes.push(intentBytes({ ...intent, claimedBy: null }));
      if (itemsWithinBudget(sizes, due.limit, due.maxBytes) < taken.length) return taken;
    }
  }
  return taken;
}

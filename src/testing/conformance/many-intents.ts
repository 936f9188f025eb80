/**
 * A scope holding more intents than one page of a cancel: the setup the paged-cancel cases share
 * (cancel-intents-pages.ts, scope-cancel-pages.ts). Two named intents target `mail`, which a
 * dispatcher takes before the cancel: one it delivers, one it keeps claimed; the rest target `crm`.
 */
import { expect } from 'vitest';
import type { IntentRequest } from '../../types.js';
import { LONG_TTL } from './helpers.js';
import type { ConformanceGate } from './subject.js';

/** More than two pages, so a page in the middle has one on both sides. */
export const MANY_INTENTS = 130;
const PER_COMMIT = 13;

export interface ManyIntents {
  scope: string;
  /** Taken by a dispatcher before the cancel and delivered. */
  delivered: string;
  /** Taken by a dispatcher before the cancel and left claimed. */
  claimed: string;
}

/** `prefix-000`, `prefix-001`…: `count` effect keys in key order. */
export function intentKeys(prefix: string, count = MANY_INTENTS): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
}

export function intentOf(setup: ManyIntents, effectKey: string): IntentRequest {
  const taken = effectKey === setup.delivered || effectKey === setup.claimed;
  return { effectKey, target: taken ? 'mail' : 'crm', payload: { effectKey } };
}

/** Commits `keys` as intents on the scope under `fence`, a few a commit, in one batch call. */
export async function commitIntents(
  gate: ConformanceGate,
  setup: ManyIntents,
  fence: number,
  keys: string[],
): Promise<void> {
  const commits = [];
  for (let start = 0; start < keys.length; start += PER_COMMIT) {
    commits.push({
      scope: setup.scope,
      fence,
      operationId: `op-${keys[start]}-${fence}`,
      intents: keys.slice(start, start + PER_COMMIT).map((key) => intentOf(setup, key)),
    });
  }
  for (const item of await gate.commitMany(commits)) {
    expect(item.ok && item.result.outcome).toBe('committed');
  }
}

/** A dispatcher takes the two `mail` intents, delivers one and keeps the other claimed. */
export async function deliverOneClaimOne(gate: ConformanceGate, setup: ManyIntents): Promise<void> {
  const taken = await gate.claimIntents({
    dispatcher: 'd1',
    ttlMs: LONG_TTL,
    limit: 10,
    targets: ['mail'],
  });
  expect(taken.map((claimed) => claimed.effectKey).sort()).toEqual(
    [setup.delivered, setup.claimed].sort(),
  );
  await gate.completeIntent(setup.delivered, {
    claimFence: taken.find((claimed) => claimed.effectKey === setup.delivered)!.claimFence,
    outcome: 'delivered',
  });
}

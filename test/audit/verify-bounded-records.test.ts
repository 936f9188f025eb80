/**
 * A verifier that remembers at most `maxRecords` record revisions (the server's background
 * verifier): its memory stays bounded however many records are written, a record it forgot is
 * checked again from its next write without a false violation, and a remembered record is checked
 * as fully as by a verifier that remembers everything.
 */
import { describe, expect, it } from 'vitest';
import { HistoryVerifier } from '../../src/audit/history-verifier.js';
import type { AuditEntry } from '../../src/types.js';
import { memoryGate } from '../helpers/memory-store.js';
import { copy } from './tamper.js';

const RECORDS = 12;

/** A valid history: RECORDS records written once each, then every one written again. */
async function history(): Promise<AuditEntry[]> {
  const gate = await memoryGate();
  try {
    const grant = await gate.acquire({ scope: 'wf', holder: 'w', ttlMs: 60_000 });
    for (const round of [1, 2]) {
      for (let i = 0; i < RECORDS; i++) {
        const result = await gate.commit({
          scope: 'wf',
          fence: grant.fence,
          operationId: `op-${round}-${i}`,
          writes: [{ name: `r-${i}`, expectRevision: round - 1, value: { round } }],
          reads: [{ name: `r-${i}`, revision: round - 1 }],
        });
        expect(result.outcome).toBe('committed');
      }
    }
    const entries: AuditEntry[] = [];
    let afterSeq: number | undefined;
    for (;;) {
      const page = await gate.store.readAudit(undefined, { afterSeq, limit: 1000 });
      entries.push(...page.items);
      if (page.nextAfterSeq === null) return entries;
      afterSeq = page.nextAfterSeq;
    }
  } finally {
    await gate.close();
  }
}

function verified(entries: readonly AuditEntry[], maxRecords?: number) {
  const verifier = new HistoryVerifier(undefined, maxRecords === undefined ? {} : { maxRecords });
  for (const entry of entries) verifier.push(entry);
  const remembered = verifier.checkpoint().scopes.reduce((sum, scope) => sum + scope[8].length, 0);
  return { violations: verifier.violations, remembered };
}

describe('a verifier with maxRecords', () => {
  it('remembers at most maxRecords revisions and finds no violation in a valid history', async () => {
    const entries = await history();
    expect(verified(entries)).toEqual({ violations: [], remembered: RECORDS });
    // Every record is forgotten before its second write, which is taken as it comes.
    expect(verified(entries, 3)).toEqual({ violations: [], remembered: 3 });
  });

  it('still finds a skipped revision of a record it remembers', async () => {
    const entries = copy(await history());
    const last = entries.findLast((e) => e.kind === 'commit' && e.outcome === 'committed')!;
    const change = last.records![0]!;
    change.resulting = change.resulting! + 1;
    // Its first write is RECORDS writes back: remembered with maxRecords RECORDS, forgotten with 3.
    expect(change.name).toBe(`r-${RECORDS - 1}`);
    for (const maxRecords of [undefined, RECORDS]) {
      expect(verified(entries, maxRecords).violations.map((v) => v.kind)).toContain(
        'revision_skipped',
      );
    }
    // Once forgotten, its next write is taken as it comes: the check bounded memory gives up.
    expect(verified(entries, 3).violations).toEqual([]);
  });
});

/**
 * Audit order (SEMANTICS.md, "Audit and verification"): every transition appends an entry whose
 * seq is strictly increasing, a tenant reads only its own entries, and paging by afterSeq reads
 * the same log as one read.
 */
import { describe, expect, it } from 'vitest';
import { OperationIds, acquire, auditAfter, expectCommitted, put } from './helpers.js';
import type { ConformanceGate, SubjectFixture } from './subject.js';

/** A little of everything in one tenant: grants, commits (one rejected), intents, operators. */
async function history(gate: ConformanceGate, scope: string): Promise<void> {
  const ids = new OperationIds(scope);
  const grant = await acquire(gate, scope, 'w1');
  await put(gate, grant, 'doc', 0, 'one', ids.next());
  expect(
    (
      await gate.commit({
        scope,
        fence: grant.fence,
        operationId: ids.next(),
        writes: [{ name: 'doc', expectRevision: 0, value: 'stale' }],
      })
    ).outcome,
  ).toBe('rejected');
  expectCommitted(
    await gate.commit({
      scope,
      fence: grant.fence,
      operationId: ids.next(),
      intents: [{ effectKey: `${scope}-fx`, target: 'crm', payload: {} }],
    }),
  );
  await gate.renew({ scope, fence: grant.fence, holder: 'w1', ttlMs: 60_000 });
  await gate.takeover(scope, { holder: 'operator' });
  await gate.cancel(scope, { reason: 'done' });
}

export function auditOrderCases(fx: SubjectFixture): void {
  describe('audit order', () => {
    it('seq strictly increases; each tenant reads its own entries only, the same when paged', async () => {
      const { gate, other } = fx.subject;
      // Interleaved, so the tenants' entries share the store's sequence.
      await Promise.all([history(gate, 'a/memory'), history(other, 'b/memory')]);
      await history(gate, 'c/memory');

      const mine = await auditAfter(gate);
      const theirs = await auditAfter(other);
      for (const [entries, scopes] of [
        [mine, ['a/memory', 'c/memory']],
        [theirs, ['b/memory']],
      ] as const) {
        expect(entries.length).toBeGreaterThan(0);
        const seqs = entries.map((entry) => entry.seq);
        for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
        expect(new Set(entries.map((entry) => entry.scope))).toEqual(new Set(scopes));
      }
      expect(mine.map((entry) => entry.kind)).toEqual(
        expect.arrayContaining(['acquire', 'commit', 'renew', 'takeover', 'cancel', 'intent']),
      );

      const paged = [];
      let after = 0;
      for (;;) {
        const page = await gate.audit({ afterSeq: after, limit: 3 });
        paged.push(...page.items);
        if (page.nextAfterSeq === null) break;
        after = page.nextAfterSeq;
      }
      expect(paged).toEqual(mine);
      const commits = await gate.audit({ kind: 'commit', limit: 1000 });
      expect(commits.items).toEqual(mine.filter((entry) => entry.kind === 'commit'));
    });
  });
}

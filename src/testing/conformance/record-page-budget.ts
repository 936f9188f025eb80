/**
 * The byte budget of a record page (core/answer-budget.ts), on the Store itself so a small budget
 * stands for the default: a page ends before its values pass the budget, holds at least one
 * record, and carries a cursor whenever records follow, in every order and direction.
 */
import { describe, expect, it } from 'vitest';
import { resolveRecordPage, startCursor } from '../../core/record-page.js';
import type { Store } from '../../store/store.js';
import type { ListRecordsQuery } from '../../types.js';
import { OperationIds, acquire, expectCommitted, put } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'budgeted';
const BUDGET = 250;

/** Values whose JSON text has these many bytes: a string of n - 2 characters. */
const BYTES: Record<string, number> = { a: 102, b: 102, c: 402, d: 102, e: 2 };

function valueOf(bytes: number): string {
  return 'x'.repeat(bytes - 2);
}

/** Every page of a listing under the budget, as the names each page held. */
async function pagesOf(
  store: Store,
  tenant: string,
  query: ListRecordsQuery,
  maxBytes: number,
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 20; page += 1) {
    const answer = await store.listRecordsPage(
      tenant,
      SCOPE,
      cursor === undefined ? query : { ...query, cursor },
      maxBytes,
    );
    pages.push(answer.items.map((record) => record.name));
    for (const record of answer.items) {
      expect(record.value).toEqual(record.exists ? valueOf(BYTES[record.name] ?? 0) : null);
    }
    if (answer.nextCursor === null) return pages;
    cursor = answer.nextCursor;
  }
  throw new Error('the listing did not end within 20 pages');
}

export function recordPageBudgetCases(fx: SubjectFixture): void {
  describe.skipIf(!fx.capabilities.storeInProcess)('record page byte budget', () => {
    /** a to e written in the order e, c, a, d, b (so revision order is not name order); f a tombstone. */
    async function seed(): Promise<void> {
      const { gate } = fx.subject;
      const ids = new OperationIds('budget');
      const grant = await acquire(gate, SCOPE, 'w1');
      for (const name of ['e', 'c', 'a', 'd', 'b', 'f']) {
        await put(gate, grant, name, 0, valueOf(BYTES[name] ?? 2), ids.next());
      }
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'f', expectRevision: 1, delete: true }],
        }),
      );
    }

    it('a page ends where its values would pass the budget and still carries a cursor', async () => {
      await seed();
      const { store, tenant } = fx.store;
      expect(await pagesOf(store, tenant, { limit: 10 }, BUDGET)).toEqual([
        ['a', 'b'],
        ['c'],
        ['d', 'e', 'f'],
      ]);
      expect(await pagesOf(store, tenant, { limit: 10, direction: 'desc' }, BUDGET)).toEqual([
        ['f', 'e', 'd'],
        ['c'],
        ['b', 'a'],
      ]);
      expect(await pagesOf(store, tenant, { limit: 2 }, BUDGET)).toEqual([
        ['a', 'b'],
        ['c'],
        ['d', 'e'],
        ['f'],
      ]);
    });

    it('a record larger than the whole budget is a page of its own', async () => {
      await seed();
      const { store, tenant } = fx.store;
      expect(await pagesOf(store, tenant, { prefix: 'c', limit: 10 }, 10)).toEqual([['c']]);
      expect(await pagesOf(store, tenant, { after: 'b', limit: 10 }, 10)).toEqual([
        ['c'],
        ['d'],
        ['e', 'f'],
      ]);
    });

    it('revision order in both directions under the budget', async () => {
      await seed();
      const { store, tenant } = fx.store;
      const unbounded = Number.MAX_SAFE_INTEGER;
      for (const direction of ['asc', 'desc'] as const) {
        const query: ListRecordsQuery = { order: 'revision', direction, limit: 10 };
        const [whole] = await pagesOf(store, tenant, query, unbounded);
        const pages = await pagesOf(store, tenant, query, BUDGET);
        expect(pages.flat()).toEqual(whole);
        expect(pages.length).toBeGreaterThan(1);
        for (const page of pages) {
          const bytes = page.reduce((sum, name) => sum + (BYTES[name] ?? 0), 0);
          expect(page.length === 1 || bytes <= BUDGET).toBe(true);
        }
      }
    });

    it('a start cursor reads a listing from its first record, in every order and direction', async () => {
      await seed();
      const { store, tenant } = fx.store;
      for (const query of [
        { limit: 10 },
        { limit: 10, direction: 'desc' },
        { limit: 10, prefix: 'd' },
        { limit: 10, prefix: 'd', direction: 'desc' },
        { limit: 10, order: 'revision' },
        { limit: 10, order: 'revision', direction: 'desc' },
        { limit: 10, after: 'b' },
      ] satisfies ListRecordsQuery[]) {
        const cursor = startCursor(resolveRecordPage(query, 0));
        expect(
          await pagesOf(store, tenant, { ...query, cursor }, BUDGET),
          JSON.stringify(query),
        ).toEqual(await pagesOf(store, tenant, query, BUDGET));
      }
    });
  });
}

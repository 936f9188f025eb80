/**
 * Record pages: prefix, name and revision order in both directions, `after`, and cursors that walk
 * a scope page by page without repeating or skipping a record.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import type { ListRecordsQuery, RecordState } from '../../types.js';
import { OperationIds, acquire, expectCommitted, expectFailure, put } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'thread-1';

/** Reads every page of a listing, returning the names in the order the pages gave them. */
async function walk(gate: FencegateApi, query: ListRecordsQuery): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page += 1) {
    const answer = await gate.listRecordsPage(
      SCOPE,
      cursor === undefined ? query : { ...query, cursor },
    );
    expect(answer.items.length).toBeLessThanOrEqual(query.limit ?? 100);
    names.push(...answer.items.map((record: RecordState) => record.name));
    if (answer.nextCursor === null) return names;
    cursor = answer.nextCursor;
  }
  throw new Error('the listing did not end within 50 pages');
}

export function recordPageCases(fx: SubjectFixture): void {
  describe('record pages', () => {
    /** cp/1..cp/5 and wr/a, wr/b; cp/2 written three times, cp/4 deleted (a tombstone). */
    async function seed(gate: FencegateApi): Promise<void> {
      const ids = new OperationIds();
      const grant = await acquire(gate, SCOPE, 'w1');
      for (const name of ['cp/3', 'cp/1', 'cp/5', 'cp/2', 'cp/4', 'wr/b', 'wr/a']) {
        await put(gate, grant, name, 0, { name }, ids.next());
      }
      await put(gate, grant, 'cp/2', 1, 'again', ids.next());
      await put(gate, grant, 'cp/2', 2, 'and again', ids.next());
      expectCommitted(
        await gate.commit({
          scope: SCOPE,
          fence: grant.fence,
          operationId: ids.next(),
          writes: [{ name: 'cp/4', expectRevision: 1, delete: true }],
        }),
      );
    }

    it('pages through names with a prefix in both directions, tombstones included', async () => {
      const { gate } = fx.subject;
      await seed(gate);
      expect(await walk(gate, { prefix: 'cp/', limit: 2 })).toEqual([
        'cp/1',
        'cp/2',
        'cp/3',
        'cp/4',
        'cp/5',
      ]);
      expect(await walk(gate, { prefix: 'cp/', direction: 'desc', limit: 2 })).toEqual([
        'cp/5',
        'cp/4',
        'cp/3',
        'cp/2',
        'cp/1',
      ]);
      const first = await gate.listRecordsPage(SCOPE, { prefix: 'cp/', limit: 5 });
      expect(first.nextCursor).toBeNull();
      expect(first.items.find((record) => record.name === 'cp/4')).toMatchObject({
        exists: false,
        revision: 2,
      });
      expect(await walk(gate, { limit: 3 })).toEqual([
        'cp/1',
        'cp/2',
        'cp/3',
        'cp/4',
        'cp/5',
        'wr/a',
        'wr/b',
      ]);
    });

    it('starts past a name with after, in the direction of the listing', async () => {
      const { gate } = fx.subject;
      await seed(gate);
      const older = await gate.listRecordsPage(SCOPE, {
        prefix: 'cp/',
        direction: 'desc',
        after: 'cp/3',
        limit: 10,
      });
      expect(older.items.map((record) => record.name)).toEqual(['cp/2', 'cp/1']);
      const newer = await gate.listRecordsPage(SCOPE, { prefix: 'cp/', after: 'cp/3', limit: 1 });
      expect(newer.items.map((record) => record.name)).toEqual(['cp/4']);
      expect(newer.nextCursor).not.toBeNull();
    });

    it('orders by revision, ties broken by name, and pages by cursor', async () => {
      const { gate } = fx.subject;
      await seed(gate);
      // Revisions: cp/2 3, cp/4 2 (its tombstone), everything else 1.
      expect(await walk(gate, { order: 'revision', direction: 'desc', limit: 2 })).toEqual([
        'cp/2',
        'cp/4',
        'wr/b',
        'wr/a',
        'cp/5',
        'cp/3',
        'cp/1',
      ]);
      expect(await walk(gate, { order: 'revision', prefix: 'cp/', limit: 1 })).toEqual([
        'cp/1',
        'cp/3',
        'cp/5',
        'cp/4',
        'cp/2',
      ]);
    });

    it('answers an empty page for a scope without records', async () => {
      const { gate } = fx.subject;
      expect(await gate.listRecordsPage('never-created', { limit: 10 })).toEqual({
        items: [],
        nextCursor: null,
      });
    });

    it('refuses a bad order, a foreign cursor, after in revision order and a zero limit', async () => {
      const { gate } = fx.subject;
      await seed(gate);
      const page = await gate.listRecordsPage(SCOPE, { limit: 1 });
      const cursor = page.nextCursor ?? '';
      await expectFailure(
        gate.listRecordsPage(SCOPE, { order: 'size' as never }),
        'invalid_request',
      );
      await expectFailure(
        gate.listRecordsPage(SCOPE, { order: 'revision', cursor }),
        'invalid_request',
      );
      await expectFailure(
        gate.listRecordsPage(SCOPE, { order: 'revision', after: 'cp/1' }),
        'invalid_request',
      );
      await expectFailure(gate.listRecordsPage(SCOPE, { limit: 0 }), 'invalid_request');
      await expectFailure(gate.listRecordsPage(SCOPE, { prefix: 'bad prefix' }), 'invalid_request');
    });

    it('refuses a cursor whose name is not a record name, in either order, before reading', async () => {
      const { gate } = fx.subject;
      await seed(gate);
      const crafted = (key: string) => Buffer.from(key, 'utf8').toString('base64url');
      for (const [order, key] of [
        ['name', 'n:a\0b'],
        ['name', 'n:bad name'],
        ['revision', 'r:1:\0'],
        ['revision', 'r:1:cp/\u00e9'],
      ] as const) {
        const error = await expectFailure(
          gate.listRecordsPage(SCOPE, { order, cursor: crafted(key) }),
          'invalid_request',
        );
        expect(error.details, JSON.stringify(key)).toMatchObject({ field: 'cursor' });
      }
    });
  });
}

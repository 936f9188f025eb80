/**
 * A cutover's report is a fold kept between calls: a later call reads only the audit entries
 * appended since the previous one, and still counts every stale attempt and live commit that
 * came after the cutover, as a report built from scratch does.
 */
import { expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import type { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { Store } from '../../src/store/store.js';
import type { AuditPage, AuditQuery } from '../../src/types.js';
import { memoryStore } from '../helpers/memory-store.js';

/** The real store, counting the audit entries each readAudit call hands back. */
function countingReads(store: MemoryStore): { store: Store; read: () => number } {
  let read = 0;
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'readAudit') {
        return async (tenant: string | undefined, query: AuditQuery): Promise<AuditPage> => {
          const page = await target.readAudit(tenant, query);
          read += page.items.length;
          return page;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  return { store: counted, read: () => read };
}

it('counts what came after the cutover across calls, reading only the new entries', async () => {
  const inner = memoryStore();
  const { store, read } = countingReads(inner);
  const gate = await Fencegate.open({ store, tenant: 'acme' });
  try {
    await gate.registerPolicy({ version: 'v2' });
    const old = await gate.acquire({ scope: 's', holder: 'old', ttlMs: 600_000 });
    await gate.cutover({ cutoverId: 'c1', toPolicy: 'v2', holder: 'ctl', scopes: ['s'] });
    const stale = (n: number) =>
      gate.commit({
        scope: 's',
        fence: old.fence,
        operationId: `stale-${n}`,
        writes: [{ name: 'r', expectRevision: 0, value: n }],
      });
    await stale(1);
    expect(await gate.cutoverReport('c1')).toMatchObject({ staleAttempts: 1, staleAccepted: 0 });

    const before = read();
    await stale(2);
    await stale(3);
    const report = await gate.cutoverReport('c1');
    expect(report).toMatchObject({ staleAttempts: 3, staleAccepted: 0 });
    expect(report?.staleRejectedByReason).toEqual({ stale_fence: 3 });
    expect(read() - before).toBe(2);

    const rebuilt = await (
      await Fencegate.open({ store: inner, tenant: 'acme' })
    ).cutoverReport('c1');
    expect(rebuilt).toEqual(report);
  } finally {
    await gate.close();
  }
});

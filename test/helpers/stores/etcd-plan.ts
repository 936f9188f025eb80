/**
 * Plans a cutover on etcd behind the store's back: the core plan applied by an engine of its own,
 * as a cutover interrupted right after its planning Txn leaves the store.
 */
import { ManualClock } from '../../../src/testing/index.js';
import { planCutoverStart } from '../../../src/core/plan/plan-cutover.js';
import { EtcdConnection } from '../../../src/store/etcd/etcd-connection.js';
import {
  AUDIT_SLOTS,
  DEFAULT_ETCD_LIMITS,
  EtcdEngine,
} from '../../../src/store/etcd/etcd-engine.js';
import { EtcdKeys } from '../../../src/store/etcd/etcd-keys.js';
import { KeyCache } from '../../../src/store/optimistic/key-cache.js';
import { parseEtcdUrl } from '../../../src/store/etcd/etcd-url.js';
import type { CutoverRequest } from '../../../src/types.js';

export async function planOnEtcd(
  url: string,
  tenant: string,
  request: CutoverRequest & { cutoverId: string },
  now: number,
): Promise<void> {
  const target = parseEtcdUrl(url);
  const connection = new EtcdConnection({
    hosts: target.hosts,
    callTimeoutMs: 1_500,
    operationTimeoutMs: 5_000,
  });
  try {
    const keys = new EtcdKeys(target.prefix);
    const clock = new ManualClock(now);
    const engine = new EtcdEngine(connection, keys, new KeyCache(), clock, DEFAULT_ETCD_LIMITS);
    const { header } = await connection.range({ key: Buffer.from(keys.family('s')) });
    const lastSeq = Number(header.revision) * AUDIT_SLOTS + AUDIT_SLOTS - 1;
    await engine.run(tenant, (s) => planCutoverStart(s, request, lastSeq));
  } finally {
    connection.close();
  }
}

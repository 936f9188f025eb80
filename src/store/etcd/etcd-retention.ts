/**
 * Retention on etcd: stored outcomes older than a cutoff, and audit keys through a verified seq,
 * deleted in Txns of at most --max-txn-ops keys. Outcomes never change once stored, so a delete
 * needs no compare. An audit key holds one Txn's entries for a tenant; it goes when its last
 * entry is at or below the checkpoint (a key straddling it stays, below the mark where verify
 * starts reading).
 */
import { randomBytes } from 'node:crypto';
import { CompareResult, CompareTarget } from 'etcd3';
import type { IKeyValue, IRequestOp } from 'etcd3';
import type { OperationRow } from '../../core/plan/transition.js';
import { rolloutDriverKey, rolloutKey, rolloutScopesPrefix } from '../../core/rollout-rows.js';
import type { EtcdConnection } from './etcd-connection.js';
import { AUDIT_SLOTS } from './etcd-engine.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import { parseValue, scanPrefix } from './etcd-scan.js';

async function deleteKeys(connection: EtcdConnection, keys: Buffer[]): Promise<number> {
  const result = await connection.writeTxn({
    success: keys.map((key): IRequestOp => ({ request_delete_range: { key } })),
  });
  if (!result.ok) throw connection.writeError(result.error, undefined);
  return result.response.responses.reduce(
    (sum, response) => sum + Number(response.response_delete_range?.deleted ?? 0),
    0,
  );
}

/** Deletes keys one batch at a time as `select` finds them. */
async function pruneWhere(
  connection: EtcdConnection,
  prefix: string,
  batch: number,
  select: (kv: IKeyValue) => boolean,
): Promise<number> {
  let pending: Buffer[] = [];
  let deleted = 0;
  for await (const kv of scanPrefix(connection, prefix)) {
    if (!select(kv)) continue;
    pending.push(kv.key);
    if (pending.length === batch) {
      deleted += await deleteKeys(connection, pending);
      pending = [];
    }
  }
  if (pending.length > 0) deleted += await deleteKeys(connection, pending);
  return deleted;
}

export function pruneOperations(
  connection: EtcdConnection,
  keys: EtcdKeys,
  batch: number,
  createdBefore: number,
): Promise<number> {
  return pruneWhere(
    connection,
    keys.family('o'),
    batch,
    (kv) => parseValue<OperationRow>(kv).at < createdBefore,
  );
}

export async function pruneAudit(
  connection: EtcdConnection,
  keys: EtcdKeys,
  batch: number,
  throughSeq: number,
  lastHash: string | null,
): Promise<number> {
  // The mark first: from then on a verify without the checkpoint is refused, even mid-prune.
  await raiseMark(connection, keys, throughSeq, lastHash);
  let deleted = 0;
  await pruneWhere(connection, keys.family('a'), batch, (kv) => {
    const { offset, entries } = parseValue<{ offset: number; entries: unknown[] }>(kv);
    const lastSeq = Number(kv.create_revision) * AUDIT_SLOTS + offset + entries.length - 1;
    if (lastSeq > throughSeq) return false;
    deleted += entries.length;
    return true;
  });
  return deleted;
}

export async function auditPrunedThrough(
  connection: EtcdConnection,
  keys: EtcdKeys,
): Promise<number> {
  const response = await connection.range({ key: Buffer.from(keys.auditPrunedThrough()) });
  const kv = response.kvs[0];
  return kv === undefined ? 0 : Number(kv.value.toString());
}

export async function auditPrunedHash(
  connection: EtcdConnection,
  keys: EtcdKeys,
): Promise<string | null> {
  const response = await connection.range({ key: Buffer.from(keys.auditPrunedHash()) });
  const kv = response.kvs[0];
  return kv === undefined || kv.value.length === 0 ? null : kv.value.toString();
}

/**
 * The store's id: read, or made at random and put only if no process put one first (a create
 * compare), then read back, so every process agrees on it.
 */
export async function storeIdOf(connection: EtcdConnection, keys: EtcdKeys): Promise<string> {
  const key = Buffer.from(keys.storeId());
  for (;;) {
    const kv = (await connection.range({ key })).kvs[0];
    if (kv !== undefined) return kv.value.toString();
    const result = await connection.writeTxn({
      compare: [
        { key, target: CompareTarget.Create, result: CompareResult.Equal, create_revision: 0 },
      ],
      success: [{ request_put: { key, value: Buffer.from(randomBytes(16).toString('hex')) } }],
    });
    if (!result.ok) throw connection.writeError(result.error, undefined);
  }
}

/**
 * Moves the mark up to `throughSeq`, never down, against concurrent pruners, with the hash of the
 * entry at the mark.
 */
async function raiseMark(
  connection: EtcdConnection,
  keys: EtcdKeys,
  throughSeq: number,
  lastHash: string | null,
) {
  const key = Buffer.from(keys.auditPrunedThrough());
  const hashKey = Buffer.from(keys.auditPrunedHash());
  for (;;) {
    const kv = (await connection.range({ key })).kvs[0];
    if (kv !== undefined && Number(kv.value.toString()) >= throughSeq) return;
    const result = await connection.writeTxn({
      compare: [
        {
          key,
          target: CompareTarget.Mod,
          result: CompareResult.Equal,
          mod_revision: kv === undefined ? 0 : kv.mod_revision,
        },
      ],
      success: [
        { request_put: { key, value: Buffer.from(String(throughSeq)) } },
        { request_put: { key: hashKey, value: Buffer.from(lastHash ?? '') } },
      ],
    });
    if (!result.ok) throw connection.writeError(result.error, undefined);
    if (result.response.succeeded) return;
  }
}

/**
 * The first tenant after `after` with rollout documents: one read of one key past the tenant's
 * (`0` follows the `/` that ends a tenant's part of the key).
 */
export async function nextRolloutTenant(
  connection: EtcdConnection,
  keys: EtcdKeys,
  after: string,
): Promise<string | null> {
  const family = keys.family('ro');
  const start = after === '' ? family : `${family}${after}0`;
  const response = await connection.range({
    key: Buffer.from(start),
    range_end: prefixEnd(Buffer.from(family)),
    limit: 1,
    keys_only: true,
  });
  const key = response.kvs[0]?.key.toString();
  if (key === undefined) return null;
  return key.slice(family.length, key.indexOf('/', family.length));
}

/** A rollout's scope documents in Txns of `batch` keys, then the rollout's own. */
export async function deleteRollout(
  connection: EtcdConnection,
  keys: EtcdKeys,
  batch: number,
  tenant: string,
  rolloutId: string,
): Promise<number> {
  const family = keys.family('ro', tenant);
  const scopes = await pruneWhere(
    connection,
    family + rolloutScopesPrefix(rolloutId),
    batch,
    () => true,
  );
  const driver = await deleteKeys(connection, [Buffer.from(family + rolloutDriverKey(rolloutId))]);
  return (
    scopes + driver + (await deleteKeys(connection, [Buffer.from(family + rolloutKey(rolloutId))]))
  );
}

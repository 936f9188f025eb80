/**
 * What an etcd store keeps about itself beyond its data: the verified checkpoint audit retention
 * pruned through (so a server continues verifying after the pruned entries, across restarts), and
 * the mark that its first-run tokens were made (they are made once per store, ever).
 *
 * A checkpoint may be larger than one etcd value (1.5 MiB by default), so it is stored in chunks
 * under a fresh generation, and one head key names the generation and its last seq: the head is
 * switched by one compare-and-put, so a reader sees an old or a new checkpoint, never a mix.
 */
import { randomUUID } from 'node:crypto';
import { CompareResult, CompareTarget } from 'etcd3';
import type { ICompare, IRequestOp } from 'etcd3';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';

/** Characters of JSON per chunk: well under etcd's default request limit. */
const CHUNK_CHARS = 512 * 1024;

interface CheckpointHead {
  lastSeq: number;
  generation: string;
}

async function write(
  connection: EtcdConnection,
  ops: IRequestOp[],
  compare: ICompare[] = [],
): Promise<boolean> {
  const result = await connection.writeTxn({ compare, success: ops });
  if (!result.ok) throw connection.writeError(result.error, undefined);
  return result.response.succeeded;
}

/** Keeps the checkpoint unless the stored one already reaches as far or further. */
export async function saveVerifiedCheckpoint(
  connection: EtcdConnection,
  keys: EtcdKeys,
  lastSeq: number,
  json: string,
): Promise<void> {
  const headKey = Buffer.from(keys.verifiedCheckpoint());
  const generation = randomUUID();
  const chunks = Buffer.from(keys.verifiedCheckpointChunks(generation));
  for (let i = 0, n = 0; i < json.length || n === 0; i += CHUNK_CHARS, n++) {
    const key = Buffer.concat([chunks, Buffer.from(String(n).padStart(8, '0'))]);
    await write(connection, [
      { request_put: { key, value: Buffer.from(json.slice(i, i + CHUNK_CHARS)) } },
    ]);
  }
  for (;;) {
    const kv = (await connection.range({ key: headKey })).kvs[0];
    const previous = kv === undefined ? null : (JSON.parse(kv.value.toString()) as CheckpointHead);
    const stale = previous !== null && previous.lastSeq >= lastSeq;
    const switched =
      !stale &&
      (await write(
        connection,
        [
          {
            request_put: {
              key: headKey,
              value: Buffer.from(JSON.stringify({ lastSeq, generation })),
            },
          },
        ],
        [
          {
            key: headKey,
            target: CompareTarget.Mod,
            result: CompareResult.Equal,
            mod_revision: kv === undefined ? 0 : kv.mod_revision,
          },
        ],
      ));
    if (!stale && !switched) continue; // another save switched the head first: look again
    // The chunks no head names any more: the previous generation's, or ours when it was stale.
    const unused = stale ? generation : previous?.generation;
    if (unused !== undefined) {
      const prefix = Buffer.from(keys.verifiedCheckpointChunks(unused));
      await write(connection, [
        { request_delete_range: { key: prefix, range_end: prefixEnd(prefix) } },
      ]);
    }
    return;
  }
}

export async function loadVerifiedCheckpoint(
  connection: EtcdConnection,
  keys: EtcdKeys,
): Promise<string | null> {
  for (;;) {
    const kv = (await connection.range({ key: Buffer.from(keys.verifiedCheckpoint()) })).kvs[0];
    if (kv === undefined) return null;
    const { generation } = JSON.parse(kv.value.toString()) as CheckpointHead;
    const prefix = Buffer.from(keys.verifiedCheckpointChunks(generation));
    const chunks = await connection.range({ key: prefix, range_end: prefixEnd(prefix) });
    // A head names a generation only once all its chunks are written (one at least), and they are
    // deleted in one delete: none left means a save switched the head since it was read.
    if (chunks.kvs.length === 0) continue;
    // etcd answers a range in key order; the chunk numbers are zero-padded.
    return chunks.kvs.map((chunk) => chunk.value.toString()).join('');
  }
}

/** Marks the first-run tokens as made (harmless when they were before). */
export async function markFirstRunTokensMade(
  connection: EtcdConnection,
  keys: EtcdKeys,
  at: number,
): Promise<void> {
  await write(connection, [
    { request_put: { key: Buffer.from(keys.firstRunTokens()), value: Buffer.from(String(at)) } },
  ]);
}

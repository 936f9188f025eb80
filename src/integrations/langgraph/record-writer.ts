/**
 * Writes a set of records under one fence, as few commits as the write limit allows. The saver is
 * the only writer of its thread while its fence is current, so it expects the revisions it last
 * saw (0 for a new checkpoint or blob); when the store says otherwise it reads those records again
 * and retries with the revisions it read. Every other rejection (a stale fence above all) is
 * thrown as the catalog error and nothing is retried.
 */
import { createHash } from 'node:crypto';
import type { FencegateApi } from '../../api.js';
import { FencegateError } from '../../errors.js';
import type { CommitResult, IntentRequest, ValueWrite } from '../../types.js';
import { canonicalJson } from '../../core/canonical.js';

export interface RecordToWrite {
  name: string;
  value: unknown;
  /** Leave a record that exists already as it is (content-addressed data such as channel blobs). */
  keepExisting?: boolean;
}

export interface RecordBatch {
  scope: string;
  fence: number;
  /** Written last, in the final commit: the record that makes the others reachable. */
  records: RecordToWrite[];
  /** What the operationIds are derived from, with the fence and the content. */
  purpose: string;
  /** Effects committed with the final commit, so with the record that makes the others reachable. */
  intents?: IntentRequest[];
  /** The version the commits are made under (the saver's), labelling them in the audit log. */
  policyVersion?: string;
}

/** Revision conflicts the writer resolves by reading again; more would mean another writer. */
const MAX_REREADS = 3;

export async function writeRecords(
  gate: FencegateApi,
  batch: RecordBatch,
  maxWrites: number,
): Promise<void> {
  const chunks: RecordToWrite[][] = [];
  // The last chunk holds the last record, so it lands only once everything it points to has.
  for (let end = batch.records.length; end > 0; end -= maxWrites) {
    chunks.unshift(batch.records.slice(Math.max(0, end - maxWrites), end));
  }
  if (chunks.length === 0) chunks.push([]);
  for (const [index, chunk] of chunks.entries()) {
    const last = index === chunks.length - 1;
    await writeChunk(gate, batch, chunk, index, last ? (batch.intents ?? []) : []);
  }
}

async function writeChunk(
  gate: FencegateApi,
  batch: RecordBatch,
  chunk: RecordToWrite[],
  index: number,
  staged: IntentRequest[],
): Promise<void> {
  const known = new Map<string, { revision: number; exists: boolean }>();
  let intents = staged;
  for (let attempt = 0; ; attempt += 1) {
    const writes: ValueWrite[] = [];
    for (const record of chunk) {
      const current = known.get(record.name) ?? { revision: 0, exists: false };
      if (record.keepExisting === true && current.exists) continue;
      writes.push({ name: record.name, expectRevision: current.revision, value: record.value });
    }
    if (writes.length === 0 && intents.length === 0) return;
    const result = await gate.commit({
      scope: batch.scope,
      fence: batch.fence,
      operationId: operationId(batch, index, writes, intents),
      ...(batch.policyVersion === undefined ? {} : { policyVersion: batch.policyVersion }),
      writes,
      ...(intents.length > 0 ? { intents } : {}),
    });
    if (result.outcome === 'committed') return;
    const code = result.error.code;
    const repeated = result.error.details?.effectKey;
    if (code === 'duplicate_effect' && intents.some((intent) => intent.effectKey === repeated)) {
      // The same task's effect, committed by an earlier attempt of the same step (a replay, a
      // fork from its checkpoint): it exists once already, so it is absorbed, not refused.
      intents = intents.filter((intent) => intent.effectKey !== repeated);
      attempt -= 1;
      continue;
    }
    if ((code !== 'stale_revision' && code !== 'incarnation_changed') || attempt >= MAX_REREADS) {
      throw rejection(result);
    }
    const reads = await Promise.all(writes.map((write) => gate.getRecord(batch.scope, write.name)));
    for (const read of reads)
      known.set(read.name, { revision: read.revision, exists: read.exists });
  }
}

/**
 * Derived from the scope, the fence and the exact writes: a lost reply retried sends the same
 * request under the same id and gets the stored answer, while a stale run's rejection never
 * blocks the next fence's commit (a different id), which a fixed id per checkpoint would.
 */
function operationId(
  batch: RecordBatch,
  index: number,
  writes: ValueWrite[],
  intents: IntentRequest[],
): string {
  const content = intents.length === 0 ? writes : [writes, intents];
  return contentOperationId('langgraph', batch.fence, [batch.scope, batch.purpose, index, content]);
}

/** `<kind>:<fence>:<digest of the fence and the content>`: the same request, the same id. */
export function contentOperationId(kind: string, fence: number, content: unknown[]): string {
  const digest = createHash('sha256')
    .update(canonicalJson([content[0], fence, ...content.slice(1)]))
    .digest('base64url')
    .slice(0, 32);
  return `${kind}:${fence}:${digest}`;
}

/** The error a rejected commit answered. */
export function rejection(result: Extract<CommitResult, { outcome: 'rejected' }>): FencegateError {
  return new FencegateError(result.error.code, result.error.message, result.error.details);
}

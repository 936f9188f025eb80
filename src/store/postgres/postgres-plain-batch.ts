/**
 * The batches `commit_plain_batch` (postgres-sql-plain-batch.ts) may decide in one pass: no item
 * reads a dependency, creates an intent or deletes a record, and no operationId or written record
 * occurs twice in the batch. Such items cannot see each other's effects, so deciding them from one
 * read of their state is the same as running them one after the other. Any other batch runs
 * `commit_batch`, item by item.
 */
import { requestFingerprint } from '../../core/commit-check.js';
import { valueFingerprint, valueJson } from '../../core/prepared-value.js';
import type { NormalizedCommit } from '../../core/validate.js';

type BatchItem = { tenant: string; request: NormalizedCommit };

export function isPlainBatch(items: readonly BatchItem[]): boolean {
  const operations = new Set<string>();
  const records = new Set<string>();
  for (const { tenant, request } of items) {
    if (request.reads.length > 0 || request.intents.length > 0) return false;
    // JSON keys: no separator character can make two different triples collide.
    const operation = JSON.stringify([tenant, request.operationId]);
    if (operations.has(operation)) return false;
    operations.add(operation);
    for (const write of request.writes) {
      if ('delete' in write) return false;
      const record = JSON.stringify([tenant, request.scope, write.name]);
      if (records.has(record)) return false;
      records.add(record);
    }
  }
  return true;
}

/** One `commit_plain_batch` call; items sorted by (tenant, scope), see batchOrder. */
export function plainBatchStatement(
  schema: string,
  items: readonly BatchItem[],
  now: number | null,
) {
  const writeItems: number[] = [];
  const names: string[] = [];
  const expects: number[] = [];
  const values: string[] = [];
  const fingerprints: string[] = [];
  items.forEach(({ request }, i) => {
    for (const write of request.writes) {
      if ('delete' in write) throw new Error('a plain batch has no deletions');
      writeItems.push(i + 1);
      names.push(write.name);
      expects.push(write.expectRevision);
      values.push(valueJson(write));
      fingerprints.push(valueFingerprint(write));
    }
  });
  return {
    name: `fencegate_commit_plain_batch_${schema}`,
    text: `SELECT ${schema}.commit_plain_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) AS answer`,
    values: [
      items.map((item) => item.tenant),
      items.map((item) => item.request.scope),
      items.map((item) => item.request.fence),
      items.map((item) => item.request.operationId),
      items.map((item) => item.request.taskId ?? null),
      items.map((item) => item.request.policyVersion ?? null),
      items.map((item) => requestFingerprint(item.request)),
      writeItems,
      names,
      expects,
      values,
      fingerprints,
      now,
    ],
  };
}

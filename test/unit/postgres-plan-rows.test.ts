/**
 * PostgreSQL's mapping of plan rows to columns is made from one description of the tables
 * (src/store/postgres/postgres-tables.ts): every row type's put, read back from the columns it
 * writes, is the row and the ref that were planned.
 */
import { describe, expect, it } from 'vitest';
import type { Put } from '../../src/core/plan/transition.js';
import { putColumns, storedRow } from '../../src/store/postgres/postgres-plan-rows.js';

const PUTS: Put[] = [
  {
    type: 'scope',
    scope: 's',
    row: {
      fence: 3,
      holder: 'w',
      leaseExpiresAt: 90,
      policyVersion: 'v1',
      status: 'active',
      updatedAt: 10,
      grantTokenId: 'tok',
    },
  },
  { type: 'fenceGrant', scope: 's', fence: 3, row: { holder: 'w' } },
  {
    type: 'record',
    scope: 's',
    name: 'n',
    row: {
      exists: true,
      valueJson: '{"a":1}',
      revision: 2,
      incarnation: 1,
      fingerprint: 'f',
      updatedAt: 10,
    },
  },
  { type: 'deletion', scope: 's', name: 'n', revision: 2, row: { at: null } },
  {
    type: 'operation',
    operationId: 'op',
    row: {
      requestFingerprint: 'rf',
      outcome: {
        outcome: 'committed',
        operationId: 'op',
        scope: 's',
        fence: 3,
        records: [{ name: 'n', revision: 2, incarnation: 1, fingerprint: 'f' }],
        intents: [],
        replayed: false,
      },
      at: 10,
    },
  },
  {
    type: 'intent',
    effectKey: 'fx',
    row: {
      effectKey: 'fx',
      scope: 's',
      target: 'mail',
      payload: { to: 'x' },
      status: 'claimed',
      attempts: 1,
      fence: 3,
      operationId: 'op',
      claimFence: 1,
      providerRef: null,
      lastError: null,
      createdAt: 10,
      updatedAt: 11,
      unknownOutcomes: 0,
      claimedBy: 'd',
      claimExpiresAt: 40,
      nextAttemptAt: null,
    },
  },
  {
    type: 'policy',
    version: 'v1',
    row: { version: 'v1', digest: 'd', description: null, registeredBy: 'op', registeredAt: 5 },
  },
  {
    type: 'cutover',
    cutoverId: 'c',
    row: {
      cutoverId: 'c',
      requestFingerprint: 'rf',
      toPolicy: 'v2',
      holder: 'ctl',
      leaseTtlMs: null,
      reason: 'move',
      status: 'running',
      startedAt: 10,
      completedAt: null,
      startSeq: 4,
      scopes: ['a', 'b'],
    },
  },
  { type: 'cutoverStep', cutoverId: 'c', scope: 'a', row: { fence: 4, skipped: true } },
  { type: 'cutoverStep', cutoverId: 'c', scope: 'b', row: { fence: 5 } },
  {
    type: 'job',
    jobId: 'j',
    row: {
      jobId: 'j',
      scope: 's',
      policyVersion: 'v1',
      fence: 3,
      state: 'succeeded',
      attempt: 1,
      at: 10,
    },
  },
];

describe('PostgreSQL plan rows', () => {
  it.each(PUTS.map((put) => [put.type, put] as const))(
    'a %s put read back from its columns is the planned row',
    (type, put) => {
      const { row, ...ref } = put;
      // As the apply step answers a row: to_jsonb of it, with its row_version.
      const columns = { ...putColumns(put), row_version: 7 };
      expect(storedRow(type, columns)).toEqual({ ref, version: 7, row });
    },
  );
});

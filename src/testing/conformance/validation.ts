/**
 * Malformed requests are answered invalid_request (or payload_too_large) and change nothing: no
 * scope, record, intent or audit entry moves. Requests are built untyped on purpose, as a client
 * in another language would send them.
 */
import { describe, expect, it } from 'vitest';
import type { FencegateApi } from '../../api.js';
import type { ErrorCode } from '../../errors.js';
import { acquire, auditAfter, expectFailure, put, tenantState } from './helpers.js';
import type { SubjectFixture } from './subject.js';

const SCOPE = 'wf-1/memory';
const FENCE = 1;

/** Lets a test hand the API a request its types would refuse. */
function raw<T>(value: Record<string, unknown>): T {
  return value as unknown as T;
}

type Call = (gate: FencegateApi) => Promise<unknown>;

function commit(body: Record<string, unknown>): Call {
  return (gate) => gate.commit(raw({ scope: SCOPE, fence: FENCE, operationId: 'op-bad', ...body }));
}

const oversized = 'x'.repeat(256 * 1024 + 1);
const tooManyWrites = Array.from({ length: 65 }, (_, i) => ({
  name: `r${i}`,
  expectRevision: 0,
  value: i,
}));

const CASES: [string, Call, ErrorCode][] = [
  [
    'acquire: a scope name outside the allowed characters',
    (g) => g.acquire(raw({ scope: 'wf 1/memory', holder: 'w1', ttlMs: 1_000 })),
    'invalid_request',
  ],
  [
    'acquire: a scope name over 256 characters',
    (g) => g.acquire(raw({ scope: 's'.repeat(257), holder: 'w1', ttlMs: 1_000 })),
    'invalid_request',
  ],
  [
    'acquire: ttlMs below 100',
    (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: 99 })),
    'invalid_request',
  ],
  [
    'acquire: ttlMs above 86,400,000',
    (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: 86_400_001 })),
    'invalid_request',
  ],
  [
    'acquire: a fractional ttlMs',
    (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: 1_000.5 })),
    'invalid_request',
  ],
  [
    'acquire: ttlMs as a string',
    (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: '1000' })),
    'invalid_request',
  ],
  ['acquire: no holder', (g) => g.acquire(raw({ scope: SCOPE, ttlMs: 1_000 })), 'invalid_request'],
  [
    'acquire: an unknown field',
    (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: 1_000, priority: 1 })),
    'invalid_request',
  ],
  [
    'renew: a negative fence',
    (g) => g.renew(raw({ scope: SCOPE, holder: 'w1', fence: -1, ttlMs: 1_000 })),
    'invalid_request',
  ],
  [
    'release: a fence beyond the safe integer range',
    (g) => g.release(raw({ scope: SCOPE, holder: 'w1', fence: 2 ** 53 })),
    'invalid_request',
  ],
  [
    'takeover: an unknown field',
    (g) => g.takeover(SCOPE, raw({ holder: 'op', force: true })),
    'invalid_request',
  ],
  [
    'cancel: a reason that is not a string',
    (g) => g.cancel(SCOPE, raw({ reason: 5 })),
    'invalid_request',
  ],
  [
    'getRecord: a record name outside the allowed characters',
    (g) => g.getRecord(SCOPE, 'bad name'),
    'invalid_request',
  ],
  ['commit: an unknown field', commit({ force: true }), 'invalid_request'],
  ['commit: no operationId', commit({ operationId: undefined }), 'invalid_request'],
  ['commit: a fence as a string', commit({ fence: '1' }), 'invalid_request'],
  ['commit: a read without a name', commit({ reads: [{ revision: 0 }] }), 'invalid_request'],
  [
    'commit: a negative expectRevision',
    commit({ writes: [{ name: 'doc', expectRevision: -1, value: 1 }] }),
    'invalid_request',
  ],
  [
    'commit: one record written twice',
    commit({
      writes: [
        { name: 'doc', expectRevision: 1, value: 1 },
        { name: 'doc', expectRevision: 1, value: 2 },
      ],
    }),
    'invalid_request',
  ],
  [
    'commit: a write with both a value and delete',
    commit({ writes: [{ name: 'doc', expectRevision: 1, value: 1, delete: true }] }),
    'invalid_request',
  ],
  [
    'commit: a write with neither a value nor delete',
    commit({ writes: [{ name: 'doc', expectRevision: 1 }] }),
    'invalid_request',
  ],
  [
    'commit: delete that is not true',
    commit({ writes: [{ name: 'doc', expectRevision: 1, delete: false }] }),
    'invalid_request',
  ],
  ['commit: more than 64 writes', commit({ writes: tooManyWrites }), 'invalid_request'],
  [
    'commit: an intent target outside its characters',
    commit({ intents: [{ effectKey: 'fx-1', target: 'crm/hook', payload: 1 }] }),
    'invalid_request',
  ],
  [
    'commit: one effectKey twice',
    commit({
      intents: [
        { effectKey: 'fx-1', target: 'crm', payload: 1 },
        { effectKey: 'fx-1', target: 'crm', payload: 2 },
      ],
    }),
    'invalid_request',
  ],
  [
    'commit: a value holding an integer beyond 2^53 - 1 (it would be rounded)',
    commit({ writes: [{ name: 'doc', expectRevision: 1, value: { amount: 2 ** 53 + 2 } }] }),
    'invalid_request',
  ],
  [
    'commit: an intent payload holding an integer below -(2^53 - 1)',
    commit({ intents: [{ effectKey: 'fx-1', target: 'crm', payload: [1, -(2 ** 60)] }] }),
    'invalid_request',
  ],
  [
    'commit: a value over 256 KiB',
    commit({ writes: [{ name: 'doc', expectRevision: 1, value: oversized }] }),
    'payload_too_large',
  ],
  [
    'commit: an intent payload over 256 KiB',
    commit({ intents: [{ effectKey: 'fx-1', target: 'crm', payload: { body: oversized } }] }),
    'payload_too_large',
  ],
];

export function validationCases(fx: SubjectFixture): void {
  describe('request validation', () => {
    for (const [title, call, code] of CASES) {
      it(`${code}: ${title}, changing nothing`, async () => {
        const { gate } = fx.subject;
        const grant = await acquire(gate, SCOPE, 'w1');
        expect(grant.fence).toBe(FENCE);
        await put(gate, grant, 'doc', 0, 'current', 'op-seed');
        const before = await tenantState(gate);
        const audit = await auditAfter(gate);

        // Whether the entry point throws or rejects is checked once below; here only the answer.
        await expectFailure(
          Promise.resolve().then(() => call(gate)),
          code,
        );

        expect(await tenantState(gate)).toEqual(before);
        expect(await auditAfter(gate)).toEqual(audit);
        expect(await gate.getOperation('op-bad')).toBeNull();
      });
    }

    it('answers invalid input with a rejected promise, never a synchronous throw', async () => {
      const { gate } = fx.subject;
      const calls: [string, Call][] = [
        ['acquire', (g) => g.acquire(raw({ scope: SCOPE, holder: 'w1', ttlMs: 1 }))],
        ['commit', commit({ fence: -1 })],
        ['getRecord', (g) => g.getRecord(SCOPE, 'bad name')],
      ];
      for (const [method, call] of calls) {
        let answer: Promise<unknown> | null = null;
        try {
          answer = call(gate);
        } catch (error) {
          expect.fail(`${method} threw synchronously: ${String(error)}`);
        }
        await expectFailure(answer, 'invalid_request');
      }
    });
  });
}

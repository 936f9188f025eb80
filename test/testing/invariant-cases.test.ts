/**
 * The conformance cases of the adapter invariants can fail: each runs against the in-memory store
 * behind a wrapper that breaks that one invariant, and must report the failure; behind the same
 * wrapper with nothing broken, every case passes.
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { Fencegate } from '../../src/gate.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import type { Store } from '../../src/store/store.js';
import { lostAnswerResentReplays } from '../../src/testing/conformance/acceptance.js';
import {
  auditReaderSeesNoHole,
  auditSeqIsGlobal,
  storeClockJudgesAtApply,
} from '../../src/testing/conformance/invariants.js';
import { operationIdConflict } from '../../src/testing/conformance/records.js';
import type { ConformanceSubject } from '../../src/testing/conformance/subject.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import type { AuditEntry } from '../../src/types.js';

type Breakage = (inner: MemoryStore) => Partial<Store>;

/** The memory store with some methods replaced; the rest answer as the store does. */
function wrapped(inner: MemoryStore, replaced: Partial<Store>): Store {
  return new Proxy<Store>(inner, {
    get(target, key): unknown {
      if (Object.hasOwn(replaced, key)) return Reflect.get(replaced, key) as unknown;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/** A subject on the wrapped store; `storeClock` is what the store plans at (the manual one). */
async function subjectOn(
  breakage: Breakage,
  storeClock: (manual: ManualClock) => Clock = (manual) => manual,
): Promise<ConformanceSubject & { gate: Fencegate }> {
  const manual = new ManualClock();
  const inner = new MemoryStore({ clock: storeClock(manual) });
  const gate = await Fencegate.open({ store: wrapped(inner, breakage(inner)) });
  return {
    gate,
    other: gate.forTenant('other'),
    advanceClock: (ms) => {
      manual.advance(ms);
      return Promise.resolve();
    },
  };
}

/** Each tenant numbers its own entries 1, 2, 3…: seqs shared across tenants. */
const seqPerTenant: Breakage = (inner) => ({
  async readAudit(tenant, query) {
    const all: AuditEntry[] = [];
    for (let afterSeq = 0; ;) {
      const page = await inner.readAudit(tenant, { afterSeq, limit: 1000 });
      all.push(...page.items);
      if (page.nextAfterSeq === null) break;
      afterSeq = page.nextAfterSeq;
    }
    const items = all
      .map((entry, i) => ({ ...entry, seq: i + 1 }))
      .filter((entry) => entry.seq > (query.afterSeq ?? 0))
      .slice(0, query.limit ?? 100);
    const last = items.at(-1);
    return { items, nextAfterSeq: last === undefined || last.seq === all.length ? null : last.seq };
  },
});

/** An entry with an even seq shows from the second read that reaches it: it commits late. */
const entriesShowLate: Breakage = (inner) => {
  const reached = new Set<number>();
  return {
    async readAudit(tenant, query, maxBytes) {
      const page = await inner.readAudit(tenant, query, maxBytes);
      const items = page.items.filter((entry) => {
        if (entry.seq % 2 === 1 || reached.has(entry.seq)) return true;
        reached.add(entry.seq);
        return false;
      });
      return { ...page, items };
    },
  };
};

/** Plans at the clock reading of the previous operation: an estimate that lags store time. */
function laggingClock(manual: ManualClock): Clock {
  let previous: number | null = null;
  return {
    now() {
      const estimate = previous ?? manual.now();
      previous = manual.now();
      return estimate;
    },
  };
}

/** Forgets outcomes: a resend is applied again as a new operation. */
const resendAppliedAgain: Breakage = (inner) => {
  let sent = 0;
  return {
    commit(tenant, request, caller) {
      sent += 1;
      return inner.commit(
        tenant,
        { ...request, operationId: `${request.operationId}.${sent}` },
        caller,
      );
    },
  };
};

/** Answers the stored outcome of an operationId whatever the body resent under it. */
const bodyIgnoredOnResend: Breakage = (inner) => ({
  async commit(tenant, request, caller) {
    const stored = await inner.getOperation(tenant, request.operationId);
    if (stored !== null) return { ...stored, replayed: true };
    return inner.commit(tenant, request, caller);
  },
});

const nothingBroken: Breakage = () => ({});

const CASES = [
  {
    name: 'audit seq is global',
    check: auditSeqIsGlobal,
    broken: () => subjectOn(seqPerTenant),
    fails: /to deeply equal \[\]/,
  },
  {
    name: 'a reader never sees a hole filled later',
    check: auditReaderSeesNoHole,
    broken: () => subjectOn(entriesShowLate),
    fails: /to deeply equal/,
  },
  {
    name: 'the store clock judges at apply',
    check: storeClockJudgesAtApply,
    broken: () => subjectOn(nothingBroken, laggingClock),
    fails: /expected rejection lease_expired, but the commit was accepted/,
  },
  {
    name: 'a lost answer resent replays',
    check: lostAnswerResentReplays,
    broken: () => subjectOn(resendAppliedAgain),
    fails: /to deeply equal/,
  },
  {
    name: 'another body under a used operationId conflicts',
    check: operationIdConflict,
    broken: () => subjectOn(bodyIgnoredOnResend),
    fails: /expected operation_id_conflict, but the call answered/,
  },
];

describe('the invariant cases of the conformance suite', () => {
  for (const { name, check, broken, fails } of CASES) {
    it(`${name}: fails on a store that breaks it`, async () => {
      const subject = await broken();
      try {
        await expect(check(subject)).rejects.toThrow(fails);
      } finally {
        await subject.gate.close();
      }
    });

    it(`${name}: passes behind the same wrapper with nothing broken`, async () => {
      const subject = await subjectOn(nothingBroken);
      try {
        await check(subject);
      } finally {
        await subject.gate.close();
      }
    });
  }
});

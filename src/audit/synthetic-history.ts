/**
 * A deterministic generator of valid audit histories, shaped like the entries the stores write:
 * grants, renewals, releases, takeovers, cutovers, cancels, deletes and re-creations, accepted
 * and rejected commits, and intents moving to delivery. It feeds the verify benchmark and the
 * tests that need large histories; every history it makes must verify with no violation.
 */
import type { AuditEntry, AuditKind, AuditOutcome, AuditRecordChange } from '../types.js';
import { seededRandom } from '../core/seeded-random.js';

export interface SyntheticHistoryOptions {
  /** Entries to generate (the result may hold up to 3 more: an operation's entries stay together). */
  entries: number;
  /** Scopes per tenant. Default 1000. */
  scopes?: number;
  /** Default 2. */
  tenants?: number;
  /** Records per scope. Default 4. */
  records?: number;
  /** Default 1. */
  seed?: number;
  /** Store time of the first entry. */
  startAt?: number;
}

const LEASE_MS = 30_000;

interface ScopeModel {
  tenant: string;
  name: string;
  fence: number;
  holder: string | null;
  leaseExpiresAt: number | null;
  deleted: boolean;
  policyVersion: string | null;
  revisions: number[];
  /** Effect keys committed and not yet delivered. */
  pending: string[];
  generation: number;
  /** fence -> the holder it was granted to (cancel and delete fences: nobody). */
  grantedTo: Map<number, string>;
}

export function generateHistory(options: SyntheticHistoryOptions): AuditEntry[] {
  const next = seededRandom(options.seed ?? 1);
  const tenants = options.tenants ?? 2;
  const scopesPerTenant = options.scopes ?? 1000;
  const recordCount = options.records ?? 4;
  const recordNames = Array.from({ length: recordCount }, (_, i) => `rec-${i}`);
  const models: ScopeModel[] = [];
  for (let t = 0; t < tenants; t++) {
    for (let s = 0; s < scopesPerTenant; s++) {
      models.push({
        tenant: `tenant-${t}`,
        name: `wf-${s}/memory`,
        fence: 0,
        holder: null,
        leaseExpiresAt: null,
        deleted: false,
        policyVersion: 'v1',
        revisions: new Array<number>(recordCount).fill(0),
        pending: [],
        generation: 0,
        grantedTo: new Map(),
      });
    }
  }

  const out: AuditEntry[] = [];
  let seq = 0;
  let at = options.startAt ?? 1_700_000_000_000;
  let effects = 0;
  let operations = 0;

  const entry = (m: ScopeModel, kind: AuditKind, outcome: AuditOutcome): AuditEntry => {
    const e: AuditEntry = {
      seq: ++seq,
      at,
      tenant: m.tenant,
      scope: m.name,
      kind,
      outcome,
      reason: null,
      taskId: null,
      operationId: null,
      holder: m.holder,
      policyVersion: m.policyVersion,
      fence: null,
      currentFence: m.fence,
      leaseExpiresAt: m.leaseExpiresAt,
      records: null,
      effectKey: null,
      reads: null,
    };
    out.push(e);
    return e;
  };

  const grant = (
    m: ScopeModel,
    kind: 'acquire' | 'takeover' | 'cutover',
    policyVersion: string | null,
  ): void => {
    m.fence++;
    m.generation++;
    m.holder = `${kind === 'cutover' ? 'controller' : 'worker'}-${m.generation}`;
    m.leaseExpiresAt = kind === 'cutover' ? null : at + LEASE_MS;
    m.deleted = false;
    if (policyVersion !== null) m.policyVersion = policyVersion;
    m.grantedTo.set(m.fence, m.holder);
    entry(m, kind, 'granted');
  };

  while (out.length < options.entries) {
    at += 1 + Math.floor(next() * 3);
    const m = models[Math.floor(next() * models.length)]!;
    if (m.deleted) {
      grant(m, 'takeover', null);
      continue;
    }
    if (m.holder === null || (m.leaseExpiresAt !== null && m.leaseExpiresAt <= at)) {
      grant(m, 'acquire', null);
      continue;
    }
    const r = next();
    if (r < 0.45) {
      // Accepted commit: one or two records, sometimes an intent.
      const changes: AuditRecordChange[] = [];
      const first = Math.floor(next() * recordCount);
      const count = 1 + Math.floor(next() * Math.min(2, recordCount));
      for (let k = 0; k < count; k++) {
        const index = (first + k) % recordCount;
        const previous = m.revisions[index]!;
        m.revisions[index] = previous + 1;
        changes.push({
          name: recordNames[index]!,
          expected: previous,
          actual: previous,
          resulting: previous + 1,
          fingerprint: 'f'.repeat(64),
          deleted: false,
        });
      }
      const e = entry(m, 'commit', 'committed');
      e.fence = m.fence;
      e.operationId = `op-${++operations}`;
      e.records = changes;
      if (next() < 0.3) {
        const effectKey = `effect-${++effects}`;
        m.pending.push(effectKey);
        const intent = entry(m, 'intent', 'pending');
        intent.effectKey = effectKey;
        intent.operationId = e.operationId;
      }
    } else if (r < 0.55) {
      // A stale worker's commit: rejected.
      const index = Math.floor(next() * recordCount);
      const current = m.revisions[index]!;
      const e = entry(m, 'commit', 'rejected');
      e.reason = 'stale_fence';
      e.fence = Math.max(0, m.fence - 1);
      // Named after the holder its fence was granted to, not the current one.
      e.holder = m.grantedTo.get(e.fence) ?? null;
      e.operationId = `op-${++operations}`;
      e.records = [
        {
          name: recordNames[index]!,
          expected: Math.max(0, current - 1),
          actual: current,
          resulting: null,
          fingerprint: null,
          deleted: false,
        },
      ];
    } else if (r < 0.68) {
      m.leaseExpiresAt = at + LEASE_MS;
      entry(m, 'renew', 'ok').fence = m.fence;
    } else if (r < 0.8) {
      const effectKey = m.pending.shift();
      if (effectKey === undefined) {
        entry(m, 'acquire', 'ok');
        continue;
      }
      // The first attempt: claim fence 1, delivered under it.
      const claim = entry(m, 'intent', 'claimed');
      claim.effectKey = effectKey;
      claim.fence = 1;
      const delivery = entry(m, 'intent', 'delivered');
      delivery.effectKey = effectKey;
      delivery.fence = 1;
    } else if (r < 0.84) {
      const fence = m.fence;
      m.holder = null;
      m.leaseExpiresAt = null;
      entry(m, 'release', 'ok').fence = fence;
    } else if (r < 0.88) {
      grant(m, 'takeover', null);
    } else if (r < 0.89) {
      m.fence++;
      m.holder = null;
      m.leaseExpiresAt = null;
      entry(m, 'cancel', 'ok');
      for (const effectKey of m.pending) entry(m, 'intent', 'cancelled').effectKey = effectKey;
      m.pending = [];
    } else if (r < 0.895) {
      m.fence++;
      m.holder = null;
      m.leaseExpiresAt = null;
      m.deleted = true;
      const changes: AuditRecordChange[] = [];
      for (let index = 0; index < recordCount; index++) {
        const previous = m.revisions[index]!;
        if (previous === 0) continue;
        m.revisions[index] = previous + 1;
        changes.push({
          name: recordNames[index]!,
          expected: previous,
          actual: previous,
          resulting: previous + 1,
          fingerprint: null,
          deleted: true,
        });
      }
      entry(m, 'delete', 'ok').records = changes;
    } else if (r < 0.9) {
      grant(m, 'cutover', m.policyVersion === 'v1' ? 'v2' : 'v1');
    } else {
      const e = entry(m, 'acquire', 'rejected');
      e.reason = 'lease_held';
      e.holder = `intruder-${m.generation}`;
    }
  }
  return out;
}

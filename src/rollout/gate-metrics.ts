/**
 * What a rollout's gates count over a step's hold, read from the store (docs/rollout.md, "What a
 * gate compares"): work under toPolicy on the scopes the rollout moved, with a fence the move gave
 * or a later one, against work under fromPolicy on the selection's scopes it has not moved, in
 * the same window. Work on a moved scope under a fence older than the move (stale v7 work the move
 * itself refused) counts on neither side.
 */
import { auditPages } from '../audit/audit-pages.js';
import { HistoryVerifier } from '../audit/history-verifier.js';
import { prunedLogCheckpoint, tenantPart } from '../audit/stored-checkpoint.js';
import type { GateCounts } from '../core/gate-rules.js';
import type { RolloutRow } from '../core/rollout-rows.js';
import { covers } from '../core/rollout-rules.js';
import type { Store } from '../store/store.js';
import type { AuditEntry, RolloutGate } from '../types.js';

/** The hold being judged: from when the step finished moving, audit entries after `afterSeq`. */
export interface GateWindow {
  from: number;
  to: number;
  afterSeq: number;
}

/**
 * Reads an external metric by name for a tenant's gate; null when the source is not the tenant's
 * or does not answer a number.
 */
export type ReadSource = (name: string, tenant: string) => Promise<number | null>;

type Side = 'new' | 'baseline' | null;

interface Tally {
  samples: number;
  failures: number;
  baselineSamples: number;
  baselineFailures: number;
}

/** The counts of every gate of `rollout`, by gate name. */
export async function measureGates(
  store: Store,
  tenant: string,
  rollout: RolloutRow,
  window: GateWindow,
  readSource: ReadSource,
  replays: TenantReplays,
): Promise<Map<string, GateCounts>> {
  const gates = rollout.gates ?? [];
  const moved = new Map(
    (await store.readRolloutScopes(tenant, rollout.rolloutId)).map(({ scope, row }) => [
      scope,
      row.fence,
    ]),
  );
  const sideOf = (scope: string | null, fence: number | null, version: string | null): Side => {
    if (scope === null) return null;
    const moveFence = moved.get(scope);
    if (moveFence !== undefined) {
      if (fence !== null && fence < moveFence) return null;
      return version === null || version === rollout.toPolicy ? 'new' : null;
    }
    if (!covers(rollout.selection, scope)) return null;
    return version === null || version === rollout.fromPolicy ? 'baseline' : null;
  };
  const counts = new Map<string, GateCounts>();
  const needs = (metric: RolloutGate['metric']) => gates.some((gate) => gate.metric === metric);
  const jobs = needs('job_failure_ratio') ? await jobTally(store, tenant, window, sideOf) : null;
  const audit =
    needs('rejection_ratio') || needs('unknown_intent_ratio') || needs('verify_violations');
  const entries = audit ? await auditTally(store, tenant, window, gates, sideOf) : null;
  const violations = needs('verify_violations')
    ? await replays.violations(store, tenant, window, new Set(moved.keys()))
    : 0;
  for (const gate of gates) {
    switch (gate.metric) {
      case 'job_failure_ratio':
        counts.set(gate.name, jobs!);
        break;
      case 'rejection_ratio':
        counts.set(gate.name, entries!.rejections.get(gate.name)!);
        break;
      case 'unknown_intent_ratio':
        counts.set(gate.name, entries!.intents);
        break;
      case 'verify_violations':
        counts.set(gate.name, { ...empty(), samples: entries!.movedEntries, failures: violations });
        break;
      case 'external': {
        const reading = await readSource(gate.source!, tenant);
        counts.set(gate.name, { ...empty(), samples: reading === null ? 0 : 1, reading });
        break;
      }
    }
  }
  return counts;
}

function empty(): Tally {
  return { samples: 0, failures: 0, baselineSamples: 0, baselineFailures: 0 };
}

function add(tally: Tally, side: Side, failed: boolean): void {
  if (side === 'new') {
    tally.samples += 1;
    if (failed) tally.failures += 1;
  } else if (side === 'baseline') {
    tally.baselineSamples += 1;
    if (failed) tally.baselineFailures += 1;
  }
}

/** Jobs whose last state was recorded in the window; failed or retrying is a failure. */
async function jobTally(
  store: Store,
  tenant: string,
  window: GateWindow,
  sideOf: (scope: string, fence: number, version: string) => Side,
): Promise<Tally> {
  const tally = empty();
  for (const job of await store.listJobs(tenant)) {
    if (job.at < window.from || job.at > window.to) continue;
    add(
      tally,
      sideOf(job.scope, job.fence, job.policyVersion),
      job.state === 'failed' || job.state === 'retrying',
    );
  }
  return tally;
}

interface AuditTally {
  rejections: Map<string, Tally>;
  intents: Tally;
  /** Audit entries on moved scopes in the window: the samples of a verify_violations gate. */
  movedEntries: number;
}

async function auditTally(
  store: Store,
  tenant: string,
  window: GateWindow,
  gates: readonly RolloutGate[],
  sideOf: (scope: string | null, fence: number | null, version: string | null) => Side,
): Promise<AuditTally> {
  const rejectionGates = gates.filter((gate) => gate.metric === 'rejection_ratio');
  const rejections = new Map(rejectionGates.map((gate) => [gate.name, empty()]));
  /** Each intent's side and last status in the window, by effect key. */
  const intents = new Map<string, { side: Side; status: string }>();
  let movedEntries = 0;
  for await (const page of auditPages(store, tenant, window.afterSeq)) {
    for (const entry of page) {
      if (entry.at < window.from || entry.at > window.to) continue;
      const side = sideOf(entry.scope, entry.fence, entry.policyVersion);
      if (side === 'new') movedEntries += 1;
      if (entry.kind === 'commit') tallyCommit(entry, side, rejectionGates, rejections);
      if (entry.kind === 'intent' && entry.effectKey !== null) {
        const known = intents.get(entry.effectKey);
        intents.set(entry.effectKey, { side: known?.side ?? side, status: entry.outcome });
      }
    }
  }
  const intentTally = empty();
  for (const { side, status } of intents.values()) {
    add(intentTally, side, status === 'unknown' || status === 'needs_attention');
  }
  return { rejections, intents: intentTally, movedEntries };
}

function tallyCommit(
  entry: AuditEntry,
  side: Side,
  gates: readonly RolloutGate[],
  tallies: Map<string, Tally>,
): void {
  for (const gate of gates) {
    const rejected =
      entry.outcome === 'rejected' && (gate.code === undefined || entry.reason === gate.code);
    add(tallies.get(gate.name)!, side, rejected);
  }
}

/**
 * `verify` over each tenant's history, kept by the driver between looks and fed only the entries
 * since the last one: the violations found on moved scopes in a window. Replayed from the start
 * (or the store's pruned-log checkpoint) once per tenant and process.
 */
export class TenantReplays {
  readonly #replays = new Map<string, { verifier: HistoryVerifier; lastSeq: number | null }>();

  async violations(
    store: Store,
    tenant: string,
    window: GateWindow,
    moved: ReadonlySet<string>,
  ): Promise<number> {
    let replay = this.#replays.get(tenant);
    if (replay === undefined) {
      const checkpoint = await prunedLogCheckpoint(store);
      const verifier = new HistoryVerifier(
        checkpoint === null ? undefined : tenantPart(checkpoint, tenant),
        { maxRecords: 100_000, maxDeliveredEffects: 100_000 },
      );
      replay = { verifier, lastSeq: checkpoint?.lastSeq ?? null };
      this.#replays.set(tenant, replay);
    }
    for await (const page of auditPages(store, tenant, replay.lastSeq)) {
      for (const entry of page) replay.verifier.push(entry);
      replay.lastSeq = page[page.length - 1]!.seq;
    }
    return replay.verifier.violations.filter(
      (violation) =>
        violation.seq > window.afterSeq && violation.scope !== null && moved.has(violation.scope),
    ).length;
  }
}

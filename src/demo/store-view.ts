/**
 * What the store says happened, loaded once for the invariant checks: audit entries, scope and
 * record states, the jobs ledger, the cutover report and the audit verifier's verdict. Nothing
 * here comes from the demo's own bookkeeping.
 */
import { verifyStore } from '../audit/verify.js';
import type { Fencegate } from '../gate.js';
import type {
  AuditEntry,
  AuditQuery,
  CommitResult,
  CutoverReport,
  JobRecord,
  RecordState,
  ScopeState,
} from '../types.js';
import { MEMORY, scopeOf, v8OperationId, type IncidentPlan } from './plan.js';

const PAGE = 1000;

export interface StoreView {
  /** This cutover's audit entries, by scope. */
  cutoverEntries: Map<string, AuditEntry[]>;
  /** Commit audit entries from the first cutover entry on, by operationId and by scope. */
  commitsByOperation: Map<string, AuditEntry[]>;
  commitsByScope: Map<string, AuditEntry[]>;
  /** Refused acquires on the scope of the v7 worker's fresh acquire. */
  refusedAcquires: AuditEntry[];
  scopes: Map<string, ScopeState>;
  /** Every workflow's memory record, by workflow number. */
  memory: RecordState[];
  /** The jobs ledger for the affected scopes. */
  jobs: JobRecord[];
  /** Stored outcomes of the retried v8 operations. */
  retriedOperations: (CommitResult | null)[];
  report: CutoverReport | null;
  verified: { ok: boolean; checked: number; violations: number };
}

export async function readAllAudit(
  gate: Fencegate,
  query: Omit<AuditQuery, 'limit'>,
): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let afterSeq = query.afterSeq ?? 0;
  for (;;) {
    const page = await gate.audit({ ...query, afterSeq, limit: PAGE });
    entries.push(...page.items);
    if (page.nextAfterSeq === null) return entries;
    afterSeq = page.nextAfterSeq;
  }
}

/** Entries by a key; entries whose key is null are left out. */
export function groupBy(
  entries: AuditEntry[],
  key: (entry: AuditEntry) => string | null,
): Map<string, AuditEntry[]> {
  const groups = new Map<string, AuditEntry[]>();
  for (const entry of entries) {
    const k = key(entry);
    if (k === null) continue;
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [entry]);
    else group.push(entry);
  }
  return groups;
}

/** Every scope under the prefix (by default the workflows' `wf-`), by name. */
export async function readScopes(
  gate: Fencegate,
  prefix = 'wf-',
): Promise<Map<string, ScopeState>> {
  const scopes = new Map<string, ScopeState>();
  let cursor: string | undefined;
  do {
    const page = await gate.listScopes({
      prefix,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const scope of page.items) scopes.set(scope.scope, scope);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return scopes;
}

/** Every workflow's memory record, by workflow number. */
export async function readMemory(gate: Fencegate, workflows: number): Promise<RecordState[]> {
  const memory: RecordState[] = [];
  for (let workflow = 0; workflow < workflows; workflow++) {
    memory.push(await gate.getRecord(scopeOf(workflow), MEMORY));
  }
  return memory;
}

export async function loadStoreView(gate: Fencegate, plan: IncidentPlan): Promise<StoreView> {
  const cutovers = (await readAllAudit(gate, { kind: 'cutover' })).filter(
    (entry) => entry.reason === plan.cutoverId,
  );
  const firstSeq = Math.min(...cutovers.map((entry) => entry.seq));
  const commits = Number.isFinite(firstSeq)
    ? await readAllAudit(gate, { kind: 'commit', afterSeq: firstSeq })
    : [];
  const refusedAcquires = await readAllAudit(gate, {
    kind: 'acquire',
    outcome: 'rejected',
    scope: plan.freshAcquire.scope,
  });
  const memory = await readMemory(gate, plan.workflows);
  const retriedOperations: (CommitResult | null)[] = [];
  for (const workflow of plan.retried) {
    retriedOperations.push(await gate.getOperation(v8OperationId(workflow)));
  }
  const verified = await verifyStore(gate.store, { tenant: gate.tenant });
  return {
    cutoverEntries: groupBy(cutovers, (entry) => entry.scope),
    commitsByOperation: groupBy(commits, (entry) => entry.operationId),
    commitsByScope: groupBy(commits, (entry) => entry.scope),
    refusedAcquires,
    scopes: await readScopes(gate),
    memory,
    jobs: await gate.store.listJobs(
      gate.tenant,
      plan.jobs.map((job) => job.scope),
    ),
    retriedOperations,
    report: await gate.cutoverReport(plan.cutoverId),
    verified: {
      ok: verified.ok,
      checked: verified.checked,
      violations: verified.violationCount,
    },
  };
}

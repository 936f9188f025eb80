/**
 * A plan's view of one tenant on SQLite. It is read inside the BEGIN IMMEDIATE transaction that
 * applies the plan, so every row it reads holds until the transaction ends: a transition's
 * `expect` needs no checking here. Rows are read when the plan asks for them, by primary key.
 */
import type { FenceGrant } from '../../core/fence-holder.js';
import { rememberJson } from '../../core/prepared-value.js';
import type {
  CutoverRow,
  RangeRef,
  Ref,
  RefOf,
  Rows,
  RowType,
  ScopeRow,
  Snapshot,
} from '../../core/plan/transition.js';
import type { Intent, JobRecord, Policy } from '../../types.js';
import { toIntent, type IntentRow } from '../rows.js';
import { type RecordRow } from './sqlite-rows.js';
import { fingerprintOf, outcomeOf } from './sqlite-operation-row.js';
import type { SqliteRowStatements } from './sqlite-row-statements.js';
import type { PendingRows } from './sqlite-pending-rows.js';

export class SqliteSnapshot implements Snapshot {
  /** Intents a claim's range read whole, served to the plan without a second read. */
  readonly #intents = new Map<string, Intent>();

  constructor(
    readonly tenant: string,
    readonly now: number,
    private readonly rows: SqliteRowStatements,
    /** Rows this transaction wrote and has not flushed yet (stored outcomes). */
    private readonly pending: PendingRows,
  ) {}

  get<K extends RowType>(ref: RefOf<K>): Rows[K] | null {
    return this.#get(ref as Ref) as Rows[K] | null;
  }

  #get(ref: Ref): Rows[RowType] | null {
    const { rows, tenant } = this;
    switch (ref.type) {
      case 'scope':
        return (rows.getScope.get(tenant, ref.scope) as ScopeRow | undefined) ?? null;
      case 'fenceGrant':
        return (
          (rows.getFenceGrant.get(tenant, ref.scope, ref.fence) as FenceGrant | undefined) ?? null
        );
      case 'record': {
        const row = rows.getRecord.get(tenant, ref.scope, ref.name) as RecordRow | undefined;
        if (row === undefined) return null;
        return {
          exists: row.present === 1,
          valueJson: row.value,
          revision: row.revision,
          incarnation: row.incarnation,
          fingerprint: row.fingerprint,
          updatedAt: row.updated_at,
        };
      }
      case 'deletion':
        return rows.getDeletion.get(tenant, ref.scope, ref.name, ref.revision) === undefined
          ? null
          : { at: null };
      case 'operation': {
        const written = this.pending.operation(tenant, ref.operationId);
        if (written !== null) return written;
        const row = rows.getOperation.get(tenant, ref.operationId) as
          { request_fingerprint: string | Buffer; outcome: string; created_at: number } | undefined;
        if (row === undefined) return null;
        return {
          requestFingerprint: fingerprintOf(row.request_fingerprint),
          outcome: outcomeOf(ref.operationId, row.outcome),
          at: row.created_at,
        };
      }
      case 'intent': {
        const loaded = this.#intents.get(ref.effectKey);
        if (loaded !== undefined) return loaded;
        const row = rows.getIntent.get(tenant, ref.effectKey) as IntentRow | undefined;
        return row === undefined ? null : intentOf(row);
      }
      case 'policy':
        return (rows.getPolicy.get(tenant, ref.version) as Policy | undefined) ?? null;
      case 'cutover':
        return this.#cutover(ref.cutoverId);
      case 'cutoverStep': {
        const row = rows.getCutoverStep.get(tenant, ref.cutoverId, ref.scope) as
          { fence: number; skipped: number } | undefined;
        if (row === undefined) return null;
        return row.skipped === 1 ? { fence: row.fence, skipped: true } : { fence: row.fence };
      }
      case 'job':
        return (rows.getJob.get(tenant, ref.jobId) as JobRecord | undefined) ?? null;
      case 'rollout': {
        const value = rows.getRollout.get(tenant, ref.key) as string | undefined;
        return value === undefined ? null : (JSON.parse(value) as Rows['rollout']);
      }
    }
  }

  /**
   * The cutover, its list read when a plan first asks for it: a chunk that reads its scopes as a
   * page of the list never does, so its cost does not follow the list's length.
   */
  #cutover(cutoverId: string): CutoverRow | null {
    const { rows, tenant } = this;
    const row = rows.getCutover.get(tenant, cutoverId) as Omit<CutoverRow, 'scopes'> | undefined;
    if (row === undefined) return null;
    let scopes: string[] | undefined;
    return {
      ...row,
      get scopes(): string[] {
        return (scopes ??= rows.cutoverScopes.all(tenant, cutoverId) as string[]);
      },
    };
  }

  list(range: RangeRef): string[] {
    const { rows, tenant } = this;
    switch (range.type) {
      case 'scopeRecords':
        return rows.listScopeRecords.all(tenant, range.scope) as string[];
      case 'scopeIntents':
        return rows.listScopeIntents.all(tenant, range.scope) as string[];
      case 'openIntents': {
        if (range.due === undefined) return rows.listOpenIntents.all(tenant) as string[];
        const { at, limit, targets } = range.due;
        const due = rows.dueIntents(targets !== null).all({
          tenant,
          now: at,
          limit,
          targets: JSON.stringify(targets ?? []),
        }) as IntentRow[];
        return due.map((row) => {
          const intent = intentOf(row);
          this.#intents.set(intent.effectKey, intent);
          return intent.effectKey;
        });
      }
      case 'scopes': {
        // Every name is below U+FFFF, so prefix + U+FFFF bounds the names with that prefix.
        return rows.listScopes.all(tenant, range.prefix, `${range.prefix}\uffff`) as string[];
      }
      case 'cutoverSteps':
        return rows.listCutoverSteps.all(tenant, range.cutoverId) as string[];
      case 'rolloutKeys':
        return rows.listRolloutKeys.all(tenant, range.prefix, `${range.prefix}\uffff`) as string[];
      case 'page': {
        const { of, after, limit } = range;
        if (of.type === 'scopeIntents') {
          const found = rows.pageScopeIntents.all(tenant, of.scope, after, limit) as IntentRow[];
          return found.map((row) => {
            const intent = intentOf(row);
            this.#intents.set(intent.effectKey, intent);
            return intent.effectKey;
          });
        }
        if (of.type === 'cutoverScopes') {
          return rows.pageCutoverScopes.all(tenant, of.cutoverId, after, limit) as string[];
        }
        const page = of.type === 'scopes' ? rows.pageScopes : rows.pageRolloutKeys;
        // One lower bound, the later of the prefix and the position: given both, SQLite searches
        // the index from the prefix and filters every name up to the position (n² / page).
        const from = after > of.prefix ? after : of.prefix;
        return page.all(tenant, from, `${of.prefix}\uffff`, after, limit) as string[];
      }
    }
  }
}

/** An intent as read, its payload's JSON text kept so writing the intent back reuses it. */
function intentOf(row: IntentRow): Intent {
  const intent = toIntent(row);
  rememberJson(intent.payload, row.payload);
  return intent;
}

/** The audit seq the snapshot's transaction has seen last (a cutover starts after it). */
export function lastAuditSeq(rows: SqliteRowStatements): number {
  return (rows.lastAuditSeq.get() as { seq: number }).seq;
}

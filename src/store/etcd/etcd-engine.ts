/**
 * The optimistic engine (store/optimistic) on etcd. `run` plans one operation and applies its
 * transition as one Txn; `apply` applies the transitions of several operations (group commit) in
 * one Txn. The Txn's compares cover every row the plan read without loading it in this call and
 * everything the transition expects; its failure branch reads those keys back, so a failed
 * compare re-plans on fresh rows without another round trip. Audit entries go under one new key
 * per tenant, created in the same Txn: `seq` is the Txn's revision × 1024 + the entry's position,
 * strictly increasing and never filled in later behind a reader.
 *
 * A Txn sent again after a lost answer carries the same audit key: if the first one applied, the
 * second fails its compare and the failure branch finds the audit key, so the answer is the first
 * one's, and the operation applied once.
 */
import { randomUUID } from 'node:crypto';
import { CompareResult, CompareTarget } from 'etcd3';
import type { ICompare, IRequestOp, ITxnRequest, ITxnResponse } from 'etcd3';
import type { Clock } from '../../core/clock.js';
import type { NewAuditEntry } from '../../core/audit-entry.js';
import type { TransactionCapabilities } from '../../core/transaction-limits.js';
import {
  isRangeRef,
  wholeRowPut,
  type Put,
  type RangeRef,
  type Ref,
  type Transition,
} from '../../core/plan/transition.js';
import { FencegateError } from '../../errors.js';
import type { KeyCache } from '../optimistic/key-cache.js';
import { OptimisticEngine, type Planned as PlannedOn } from '../optimistic/optimistic-engine.js';
import type { Intent } from '../../types.js';
import { OPEN_INTENT_STATUSES } from '../plan-rows.js';
import type { EtcdConnection } from './etcd-connection.js';
import {
  dueCandidates,
  intentHead,
  readWithinBudget,
  type DueQuery,
  type IntentHead,
} from './etcd-due-intents.js';
import { graverError, tooLarge } from './etcd-errors.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import {
  ABSENT,
  EtcdCall,
  etcdLayout,
  type EtcdSnapshot,
  type KeyState,
  type LoadedRange,
} from './etcd-snapshot.js';

/** Audit entries one Txn may write: seq = revision × AUDIT_SLOTS + position. */
export const AUDIT_SLOTS = 1024;

export interface EtcdLimits {
  /** etcd's --max-txn-ops: compares, success ops and failure ops each. */
  maxTxnOps: number;
  /** etcd's --max-request-bytes, less room for the request's framing. */
  maxRequestBytes: number;
}

export const DEFAULT_ETCD_LIMITS: EtcdLimits = { maxTxnOps: 128, maxRequestBytes: 1_572_864 };

/** Room left in a request for its framing (checkFits keeps the same). */
const FRAMING_BYTES = 16_384;

/**
 * What one Txn holds, for the limits core derives: an intent is its key, its index entry under
 * the scope and, while open, its head among the open intents. The head holds no payload, but two
 * copies are still counted: the limits derived from them stay those already documented, with
 * room to spare.
 * etcd 3.4 does not tell a client its --max-txn-ops or --max-request-bytes, so they are etcd's
 * defaults unless the store is opened with others.
 */
export function etcdTransactionCapabilities(limits: EtcdLimits): TransactionCapabilities {
  return {
    maxOps: limits.maxTxnOps,
    maxBytes: limits.maxRequestBytes - FRAMING_BYTES,
    keysPerIntent: 3,
    payloadCopiesPerIntent: 2,
  };
}

export type Planned<A> = PlannedOn<A, KeyState, LoadedRange>;

/** What one operation's sends share: its operationId, and one deadline however often it plans. */
export interface EtcdSend {
  operationId?: string;
  deadline?: number;
}

interface PutOp {
  op: IRequestOp;
  key: string;
  value: string | null;
  bytes: number;
  cache: boolean;
}

interface BuiltTxn {
  request: ITxnRequest;
  /** Keys written, their tenant and their JSON, to cache once applied. */
  written: Map<string, { tenant: string; value: string | null }>;
  auditKeys: string[];
  compared: string[];
  /** The tenant of each compared key, to cache what the failure branch read. */
  tenants: Map<string, string>;
  size: TxnSize;
}

export interface TxnSize {
  compares: number;
  ops: number;
  entries: number;
  bytes: number;
}

export class EtcdEngine extends OptimisticEngine<KeyState, LoadedRange, EtcdSend> {
  /** How long a Txn whose answer was lost is sent again before answering outcome_unknown. */
  sendWindowMs = 4_000;

  constructor(
    private readonly connection: EtcdConnection,
    private readonly keys: EtcdKeys,
    cache: KeyCache<KeyState>,
    private readonly clock: Clock,
    readonly limits: EtcdLimits,
  ) {
    // A range is compared as "unchanged since it was read", so one only expected is not read.
    super(etcdLayout(keys), cache, false);
  }

  /** etcd has no clock: this server's, read after the rows a plan decides on. */
  now(): number {
    return this.clock.now();
  }

  /** Plans and applies one operation; refusals are thrown after their audit entry is stored. */
  run<A>(
    tenant: string,
    plan: (snapshot: EtcdSnapshot) => Transition<A>,
    options: { ranges?: RangeRef[]; operationId?: string } = {},
  ): Promise<A> {
    // One deadline for the whole operation, however many times it plans and sends.
    const context = { operationId: options.operationId, deadline: Date.now() + this.sendWindowMs };
    return this.applyOne(tenant, plan, context, options.ranges);
  }

  async send(plans: readonly Planned<unknown>[], context: EtcdSend): Promise<boolean[]> {
    const call = plans[0]?.snapshot.call ?? new EtcdCall();
    const outcome = await this.apply(plans, call, context.operationId, context.deadline);
    return plans.map(() => outcome === 'applied');
  }

  /**
   * Applies the planned transitions in one Txn. 'applied' when it committed (or had already
   * committed), 'conflict' when a compare failed (`call` then holds the fresh rows to re-plan on).
   */
  async apply(
    plans: readonly Planned<unknown>[],
    call: EtcdCall,
    operationId?: string,
    deadline?: number,
  ): Promise<'applied' | 'conflict'> {
    const writes = plans.some(
      ({ transition }) =>
        transition.put.length > 0 ||
        (transition.delete?.length ?? 0) > 0 ||
        transition.audit.length > 0,
    );
    const unverified = plans.some((p) => p.snapshot.unverified.size > 0);
    const staleRanges = plans.some((p) =>
      p.transition.expect.some(
        (ref) => isRangeRef(ref) && !call.ranges.has(this.keys.range(p.snapshot.tenant, ref)),
      ),
    );
    // Everything read in this call and nothing to write: the answer stands on linearizable reads.
    if (!writes && !unverified && !staleRanges) return 'applied';
    const built = this.build(plans, call);
    const response = await this.sendTxn(built, operationId, deadline);
    if (!response.succeeded && this.alreadyApplied(built, response)) {
      // An earlier send of this very Txn applied; the failure branch holds the rows it wrote.
      this.refresh(built, response, call);
      return 'applied';
    }
    if (response.succeeded) {
      const revision = Number(response.header.revision);
      for (const [key, { tenant, value }] of built.written) {
        this.cache.set(
          tenant,
          key,
          value === null ? { modRevision: 0, value: null } : { modRevision: revision, value },
        );
      }
      return 'applied';
    }
    this.refresh(built, response, call);
    return 'conflict';
  }

  build(plans: readonly Planned<unknown>[], call: EtcdCall): BuiltTxn {
    // Compared keys, each encoded once: its compare and its read in the failure branch share it.
    const compares = new Map<string, ICompare>();
    const rangeCompares = new Map<string, ICompare>();
    const success: IRequestOp[] = [];
    const written = new Map<string, { tenant: string; value: string | null }>();
    const tenants = new Map<string, string>();
    const auditKeys: string[] = [];
    let bytes = 0;
    let position = 0;
    const auditByTenant = new Map<string, NewAuditEntry[]>();
    for (const { snapshot, transition } of plans) {
      const { tenant } = snapshot;
      for (const [key, { state }] of snapshot.unverified) {
        compares.set(key, compareKey(key, state));
        tenants.set(key, tenant);
      }
      for (const ref of transition.expect) {
        if (isRangeRef(ref)) {
          if (ref.type === 'page') throw new Error('a page of a range is read, never expected');
          const prefix = this.keys.range(tenant, ref);
          // No key of the range changed or appeared since it was read.
          const key = Buffer.from(prefix);
          rangeCompares.set(prefix, {
            key,
            range_end: prefixEnd(key),
            target: CompareTarget.Mod,
            result: CompareResult.Less,
            mod_revision: readRevision(call, prefix) + 1,
          });
        } else {
          const key = snapshot.key(ref);
          compares.set(key, compareKey(key, snapshot.state(ref)));
          tenants.set(key, tenant);
        }
      }
      for (const put of transition.put) {
        for (const op of this.putOps(tenant, snapshot, put)) {
          success.push(op.op);
          bytes += op.bytes;
          if (op.cache) written.set(op.key, { tenant, value: op.value });
        }
      }
      for (const ref of transition.delete ?? []) {
        // Compared like every key the plan read, then removed.
        const key = snapshot.key(ref);
        compares.set(key, compareKey(key, snapshot.state(ref)));
        tenants.set(key, tenant);
        success.push({ request_delete_range: { key: Buffer.from(key) } });
        bytes += key.length;
        written.set(key, { tenant, value: null });
      }
      if (transition.audit.length > 0) {
        const list = auditByTenant.get(tenant) ?? [];
        list.push(...transition.audit);
        auditByTenant.set(tenant, list);
      }
    }
    for (const [tenant, entries] of auditByTenant) {
      const key = this.keys.audit(tenant, randomUUID());
      const value = JSON.stringify({ offset: position, entries });
      position += entries.length;
      auditKeys.push(key);
      // The key is new: sending the Txn again can never apply it twice.
      compares.set(key, compareKey(key, ABSENT));
      tenants.set(key, tenant);
      success.push({ request_put: { key: Buffer.from(key), value: Buffer.from(value) } });
      bytes += key.length + value.length;
    }
    const compared = [...compares.keys()];
    const keyCompares = [...compares.values()];
    const failure: IRequestOp[] = keyCompares.map((compare) => ({
      request_range: { key: compare.key },
    }));
    const compareList = keyCompares.concat([...rangeCompares.values()]);
    for (const compare of compareList) bytes += ((compare.key?.length ?? 0) + 16) * 2;
    const size = { compares: compareList.length, ops: success.length, entries: position, bytes };
    this.checkFits(size);
    return {
      request: { compare: compareList, success, failure },
      written,
      auditKeys,
      compared,
      tenants,
      size,
    };
  }

  /** The size of one operation's Txn alone; throws invalid_request when even that cannot fit. */
  size(plan: Planned<unknown>, call: EtcdCall): TxnSize {
    return this.build([plan], call).size;
  }

  fits(size: TxnSize): boolean {
    try {
      this.checkFits(size);
      return true;
    } catch {
      return false;
    }
  }

  checkFits({ compares, ops, entries, bytes }: TxnSize): void {
    const { maxTxnOps, maxRequestBytes } = this.limits;
    if (compares > maxTxnOps) {
      throw tooLarge(
        `it reads ${compares} keys and etcd allows ${maxTxnOps} compares (--max-txn-ops)`,
      );
    }
    if (ops > maxTxnOps) {
      throw tooLarge(
        `it writes ${ops} keys and etcd allows ${maxTxnOps} operations (--max-txn-ops)`,
      );
    }
    if (entries > AUDIT_SLOTS)
      throw tooLarge(`it writes ${entries} audit entries; the limit is ${AUDIT_SLOTS}`);
    if (bytes > maxRequestBytes - FRAMING_BYTES) {
      throw tooLarge(
        `it is about ${bytes} bytes and etcd accepts ${maxRequestBytes} (--max-request-bytes)`,
      );
    }
  }

  /** The ops for one put, with the intent indexes kept in step with the intent. */
  putOps(tenant: string, snapshot: EtcdSnapshot, written: Put): PutOp[] {
    // A cutover's value holds its whole list: its put's names join the ones read.
    const read = written.type === 'cutover' ? snapshot.state(written).value : null;
    const put = read === null ? written : wholeRowPut(written, JSON.parse(read));
    const { row, ...ref } = put;
    const key = snapshot.key(ref);
    const value = JSON.stringify(row);
    const ops: PutOp[] = [
      { op: putOp(key, value), key, value, bytes: key.length + value.length, cache: true },
    ];
    if (put.type !== 'intent') return ops;
    const intent = put.row;
    const before = snapshot.state(ref);
    const previous = before.value === null ? null : (JSON.parse(before.value) as Intent);
    if (previous === null) {
      const indexKey = this.keys.scopeIntent(tenant, intent.scope, intent.effectKey);
      ops.push({
        op: putOp(indexKey, ''),
        key: indexKey,
        value: '',
        bytes: indexKey.length,
        cache: false,
      });
    }
    const openKey = this.keys.openIntent(tenant, intent.effectKey);
    if (OPEN_INTENT_STATUSES.has(intent.status)) {
      const head = JSON.stringify(intentHead(intent));
      ops.push({
        op: putOp(openKey, head),
        key: openKey,
        value: head,
        bytes: openKey.length + head.length,
        cache: false,
      });
    } else if (previous !== null && OPEN_INTENT_STATUSES.has(previous.status)) {
      ops.push({
        op: { request_delete_range: { key: Buffer.from(openKey) } },
        key: openKey,
        value: null,
        bytes: openKey.length,
        cache: false,
      });
    }
    return ops;
  }

  /**
   * Sends the Txn, and again after a lost answer, until it is answered or `deadline` passes. Any
   * answer settles it: applied, applied by an earlier send (its audit key exists), or not applied
   * and never to be (a compare failed, and compared keys never return to an earlier revision).
   * Unanswered at the deadline: store_unavailable when every send was refused before etcd proposed
   * it, outcome_unknown when one may be in the raft log.
   */
  async sendTxn(
    built: BuiltTxn,
    operationId?: string,
    deadline = Date.now() + this.sendWindowMs,
  ): Promise<ITxnResponse> {
    let gravest: unknown = undefined;
    do {
      const result = await this.connection.writeTxn(built.request);
      if (result.ok) return result.response;
      gravest = graverError(gravest, result.error);
      const mapped = this.connection.writeError(result.error, operationId);
      if (mapped instanceof FencegateError && mapped.code === 'invalid_request') throw mapped;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } while (Date.now() < deadline);
    throw this.connection.writeError(gravest, operationId);
  }

  alreadyApplied(built: BuiltTxn, response: ITxnResponse): boolean {
    return built.auditKeys.some((key) => {
      const index = built.compared.indexOf(key);
      const kvs = response.responses[index]?.response_range?.kvs ?? [];
      return kvs.length > 0;
    });
  }

  /** Takes the failure branch's reads as fresh rows; ranges are read again. */
  refresh(built: BuiltTxn, response: ITxnResponse, call: EtcdCall): void {
    built.compared.forEach((key, index) => {
      const kv = response.responses[index]?.response_range?.kvs[0];
      const state: KeyState =
        kv === undefined
          ? { modRevision: 0, value: null }
          : { modRevision: Number(kv.mod_revision), value: kv.value.toString() };
      call.fresh.set(key, state);
      this.cache.set(built.tenants.get(key) ?? '', key, state);
    });
    call.ranges.clear();
  }

  /**
   * Reads ranges at one revision (and the intents a scope's index names). Open intents are read
   * only for a claim, by the due range its plan lists (etcd-due-intents.ts): a range of them
   * named without `due` is left to that.
   */
  async loadRanges(tenant: string, call: EtcdCall, requested: RangeRef[]): Promise<void> {
    for (const range of requested) {
      if (range.type === 'openIntents' && range.due !== undefined) {
        await this.loadDueIntents(tenant, call, range.due);
      }
    }
    for (const range of requested) {
      if (range.type === 'page' && range.of.type === 'cutoverScopes') {
        await this.loadListPage(tenant, call, range, range.of.cutoverId);
      }
    }
    const ranges = requested.filter(
      (range) =>
        range.type !== 'openIntents' &&
        !(range.type === 'page' && range.of.type === 'cutoverScopes'),
    );
    if (ranges.length === 0) return;
    // Per range: its keys, and how many chars of a key come before the name it lists.
    const reads = ranges.map((range) => {
      if (range.type === 'page' && range.of.type !== 'cutoverScopes') {
        const { start, prefix, family } = this.keys.pageKeys(tenant, { ...range, of: range.of });
        const end = prefixEnd(Buffer.from(prefix));
        const op = { key: Buffer.from(start), range_end: end, limit: range.limit };
        return { op, cut: family };
      }
      const prefix = this.keys.range(tenant, range);
      const key = Buffer.from(prefix);
      const listsWhole = range.type === 'scopes' || range.type === 'rolloutKeys';
      const cut = prefix.length - (listsWhole ? range.prefix.length : 0);
      return { op: { key, range_end: prefixEnd(key) }, cut };
    });
    const response = await this.connection.readTxn({
      success: reads.map(({ op }) => ({ request_range: op })),
    });
    const revision = Number(response.header.revision);
    const intentKeys: string[] = [];
    ranges.forEach((range, index) => {
      const kvs = response.responses[index]?.response_range?.kvs ?? [];
      const names: string[] = [];
      for (const kv of kvs) {
        const name = kv.key.toString().slice(reads[index]?.cut ?? 0);
        names.push(name);
        const state = { modRevision: Number(kv.mod_revision), value: kv.value.toString() };
        switch (range.type) {
          case 'scopeRecords':
          case 'scopes':
          case 'cutoverSteps':
          case 'rolloutKeys':
            call.fresh.set(kv.key.toString(), state);
            break;
          case 'page':
            // A page of a scope's intents lists index keys: the plan reads the intents they name.
            if (range.of.type === 'scopeIntents') {
              intentKeys.push(this.keys.ref(tenant, { type: 'intent', effectKey: name }));
            } else call.fresh.set(kv.key.toString(), state);
            break;
          case 'scopeIntents':
            intentKeys.push(this.keys.ref(tenant, { type: 'intent', effectKey: name }));
            break;
        }
      }
      call.ranges.set(this.keys.range(tenant, range), { names, revision });
    });
    await this.readKeys(call, intentKeys);
  }

  /**
   * Reads a page of a cutover's list: the cutover's value holds the list, and the page's names are
   * read with their step and scope keys.
   */
  async loadListPage(
    tenant: string,
    call: EtcdCall,
    page: Extract<RangeRef, { type: 'page' }>,
    cutoverId: string,
  ): Promise<void> {
    const cutoverKey = this.keys.ref(tenant, { type: 'cutover', cutoverId });
    await this.readKeys(call, [cutoverKey]);
    const value = call.fresh.get(cutoverKey)?.value ?? null;
    const list = value === null ? [] : (JSON.parse(value) as { scopes: string[] }).scopes;
    const names = list.filter((scope) => scope > page.after).slice(0, page.limit);
    await this.readKeys(
      call,
      names.flatMap((scope) => [
        this.keys.ref(tenant, { type: 'cutoverStep', cutoverId, scope }),
        this.keys.ref(tenant, { type: 'scope', scope }),
      ]),
    );
    call.ranges.set(this.keys.range(tenant, page), { names, revision: 0 });
  }

  /**
   * Reads the heads of the tenant's open intents, then only the due intents the claim can take,
   * into the call's fresh rows; the range lists those, in claim order.
   */
  async loadDueIntents(tenant: string, call: EtcdCall, due: DueQuery): Promise<void> {
    const prefix = this.keys.range(tenant, { type: 'openIntents' });
    const key = Buffer.from(prefix);
    const response = await this.connection.readTxn({
      success: [{ request_range: { key, range_end: prefixEnd(key) } }],
    });
    const kvs = response.responses[0]?.response_range?.kvs ?? [];
    const heads = kvs.map((kv) => ({
      effectKey: kv.key.toString().slice(prefix.length),
      head: JSON.parse(kv.value.toString()) as IntentHead,
    }));
    const intentKey = (effectKey: string) => this.keys.ref(tenant, { type: 'intent', effectKey });
    const names = await readWithinBudget(dueCandidates(heads, due), due, async (effectKeys) => {
      const keys = effectKeys.map(intentKey);
      await this.readKeys(call, keys);
      return keys.map((read) => {
        const value = call.fresh.get(read)?.value ?? null;
        return value === null ? null : (JSON.parse(value) as Intent);
      });
    });
    call.ranges.set(prefix, { names, revision: Number(response.header.revision) });
  }

  loadKeys(tenant: string, call: EtcdCall, refs: Ref[]): Promise<void> {
    return this.readKeys(
      call,
      refs.map((ref) => this.keys.ref(tenant, ref)),
    );
  }

  /** Reads keys at one revision into the call's fresh rows. */
  async readKeys(call: EtcdCall, keys: string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += this.limits.maxTxnOps) {
      const chunk = keys.slice(start, start + this.limits.maxTxnOps);
      const response = await this.connection.readTxn({
        success: chunk.map((key) => ({ request_range: { key: Buffer.from(key) } })),
      });
      chunk.forEach((key, index) => {
        const kv = response.responses[index]?.response_range?.kvs[0];
        call.fresh.set(
          key,
          kv === undefined
            ? { modRevision: 0, value: null }
            : { modRevision: Number(kv.mod_revision), value: kv.value.toString() },
        );
      });
    }
  }
}

/**
 * The revision a range was read at: as a whole, or else the earliest of its pages read in this
 * call (a plan that reads a range in pages expects no key of it changed since the first). 0 when
 * neither was read, which no range with a key holds.
 */
function readRevision(call: EtcdCall, prefix: string): number {
  const whole = call.ranges.get(prefix);
  if (whole !== undefined) return whole.revision;
  let earliest: number | undefined;
  const pages = `${prefix}\0page\0`;
  for (const [name, { revision }] of call.ranges) {
    if (name.startsWith(pages)) earliest = Math.min(earliest ?? revision, revision);
  }
  return earliest ?? 0;
}

function putOp(key: string, value: string): IRequestOp {
  return { request_put: { key: Buffer.from(key), value: Buffer.from(value) } };
}

function compareKey(key: string, state: KeyState): ICompare {
  return state.value === null
    ? {
        key: Buffer.from(key),
        target: CompareTarget.Create,
        result: CompareResult.Equal,
        create_revision: 0,
      }
    : {
        key: Buffer.from(key),
        target: CompareTarget.Mod,
        result: CompareResult.Equal,
        mod_revision: state.modRevision,
      };
}

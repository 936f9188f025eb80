/**
 * What a rollout keeps in the store, as documents under one row type (`rollout`, keyed by a
 * string): the rollout's own state, the tenant's active rollouts, and one document per scope the
 * rollout moved or pinned; and beside them each cutover's cursor. Names never contain `|`
 * (limits.ts), so the keys below never collide.
 *
 *   rollout|<rolloutId>          the rollout (RolloutRow)
 *   active                       the tenant's active rollouts (ActiveRolloutsRow), read by an
 *                                acquire of a scope not pinned yet, in its own transaction
 *   scope|<rolloutId>|<scope>    what the rollout did to the scope (RolloutScopeRow)
 *   cutovers                     the tenant's plain cutovers still moving scopes
 *                                (RunningCutoversRow), read by a rollout's start
 *   cursor|<cutoverId>           how far a cutover's listing, then its chunks, have come
 *                                (CutoverCursorRow), any cutover's, a rollout's or a plain one
 *   driver|<rolloutId>           the lease of the server that drives the rollout, and its gates'
 *                                readings (RolloutDriverRow)
 */
import type { Rollout, RolloutGateResult, RolloutGateSeries, RolloutSelection } from '../types.js';
import type { Put, Snapshot } from './plan/transition.js';

/** The fields a rollout stored before holds and gates existed lacks: read with their defaults. */
export type RolloutHoldKeys = 'holdSeconds' | 'holdExtensionSeconds' | 'gates' | 'onFailure';

/**
 * The rollout as answered, less what is read from its cutover and its driver's document, plus its
 * request's fingerprint.
 */
export type RolloutRow = Omit<
  Rollout,
  'cutoverId' | 'cutoverDone' | 'gateResults' | RolloutHoldKeys
> &
  Partial<Pick<Rollout, RolloutHoldKeys>> & {
    kind: 'rollout';
    requestFingerprint: string;
  };

/** The holds, gates and failure action of a stored rollout, with the defaults of an older one. */
export function holdFieldsOf(row: RolloutRow): Pick<Rollout, RolloutHoldKeys> {
  return {
    holdSeconds: row.holdSeconds ?? null,
    holdExtensionSeconds: row.holdExtensionSeconds ?? null,
    gates: row.gates ?? [],
    onFailure: row.onFailure ?? 'rollback',
  };
}

/**
 * Who drives a rollout with holds (rollout/driver.ts): a lease in the store, taken and renewed in
 * store time, and the gates' readings of the step it looks at: the last ones, and each gate's
 * bounded series (gate-series.ts; absent from a document stored before series existed: none).
 * `fence` grows with every new holder; a driver's change of the rollout names it, so one whose
 * lease was taken over changes nothing.
 */
export interface RolloutDriverRow {
  kind: 'driver';
  holder: string;
  expiresAt: number;
  fence: number;
  step: number;
  gateResults: RolloutGateResult[];
  gateSeries?: RolloutGateSeries[];
}

/** What an acquire needs of an active rollout to pin a new scope, without reading the rollout. */
export interface ActiveRollout {
  rolloutId: string;
  fromPolicy: string;
  toPolicy: string;
  selection: RolloutSelection;
  percent: number;
  step: number;
  rollingBack: boolean;
}

export interface ActiveRolloutsRow {
  kind: 'active';
  rollouts: ActiveRollout[];
}

/**
 * The fence the rollout gave a scope when it moved it (a step) or pinned it (an acquire). `left`
 * marks a scope an operator's takeover took out of the rollout: the rollback leaves it.
 */
export interface RolloutScopeRow {
  kind: 'scope';
  fence: number;
  step: number;
  via: 'step' | 'acquire';
  left?: boolean;
}

/**
 * A plain cutover (not a rollout's own) that has not moved all its scopes yet, by the selection
 * it was asked for: a rollout whose selection overlaps it is refused until it completes.
 */
export interface RunningCutover {
  cutoverId: string;
  selection: RolloutSelection;
}

export interface RunningCutoversRow {
  kind: 'cutovers';
  cutovers: RunningCutover[];
}

/**
 * What a cutover listed in pages lists, and the last name its listing examined (`after`, '' before
 * its first page): the next page starts after it (plan-cutover-listing.ts).
 */
export type CutoverListing =
  /** A plain cutover's prefix: the active scopes under it. */
  | { of: 'prefix'; prefix: string; after: string }
  /** A rollout's step: the selection's scopes the hash admits at `percent`, on fromPolicy or none. */
  | { of: 'step'; percent: number; after: string }
  /** A rollout's rollback: every scope the rollout moved or pinned. */
  | { of: 'rollback'; after: string };

/**
 * How far a cutover has come. While `listing` is there its list is still being built, a page at a
 * time, and no chunk moves; then its chunks have handled its listed scopes before index `next`
 * (each moved or skipped, with its step row): the next chunk starts there and reads only its own
 * scopes' rows. Its chunks also keep `after`, the last name they handled ('' or none before the
 * first): the next chunk reads the names after it as a page of the list, not the whole list (a
 * cursor an older build left within a list given at the start has none, and is read by index).
 * A rollback that cancels intents also keeps how far its pages of intents have come (`intents`).
 */
export interface CutoverCursorRow {
  kind: 'cursor';
  next: number;
  intents?: IntentsCursor;
  listing?: CutoverListing;
  after?: string;
}

/**
 * A rollback's pages of intents (plan-rollback-intents.ts) are done for its listed scopes before
 * index `next`, and for scope `next` up to the intent cursor `after` (from its start when null).
 * `lastScope` names the scope before index `next`, so the next page reads the list after it (a
 * cursor an older build stored has none, and is read by index).
 */
export interface IntentsCursor {
  next: number;
  after: string | null;
  lastScope?: string;
}

export type RolloutDocument =
  | RolloutRow
  | ActiveRolloutsRow
  | RolloutScopeRow
  | RunningCutoversRow
  | CutoverCursorRow
  | RolloutDriverRow;

export const ROLLOUTS_PREFIX = 'rollout|';
const ACTIVE_KEY = 'active';
const RUNNING_CUTOVERS_KEY = 'cutovers';

export function rolloutKey(rolloutId: string): string {
  return `${ROLLOUTS_PREFIX}${rolloutId}`;
}

export function rolloutDriverKey(rolloutId: string): string {
  return `driver|${rolloutId}`;
}

export function readRolloutDriver(snapshot: Snapshot, rolloutId: string): RolloutDriverRow | null {
  return documentOf(snapshot, rolloutDriverKey(rolloutId), 'driver');
}

export function rolloutScopesPrefix(rolloutId: string): string {
  return `scope|${rolloutId}|`;
}

/**
 * The keys of a rollout's scope documents are those from `rolloutScopesPrefix` up to this one,
 * exclusive: `}` follows `|`, and names never contain `|`.
 */
export function rolloutScopesEnd(rolloutId: string): string {
  return `scope|${rolloutId}}`;
}

export function rolloutScopeKey(rolloutId: string, scope: string): string {
  return rolloutScopesPrefix(rolloutId) + scope;
}

export function cutoverCursorRef(cutoverId: string): { type: 'rollout'; key: string } {
  return rolloutRef(`cursor|${cutoverId}`);
}

export function rolloutRef(key: string): { type: 'rollout'; key: string } {
  return { type: 'rollout', key };
}

export const ACTIVE_ROLLOUTS_REF = rolloutRef(ACTIVE_KEY);

export const RUNNING_CUTOVERS_REF = rolloutRef(RUNNING_CUTOVERS_KEY);

export function rolloutPut(key: string, row: RolloutDocument): Put {
  return { type: 'rollout', key, row };
}

function documentOf<K extends RolloutDocument['kind']>(
  snapshot: Snapshot,
  key: string,
  kind: K,
): Extract<RolloutDocument, { kind: K }> | null {
  const row = snapshot.get(rolloutRef(key));
  if (row === null) return null;
  if (row.kind !== kind) throw new Error(`the rollout document ${key} is not a ${kind}`);
  return row as Extract<RolloutDocument, { kind: K }>;
}

export function readRollout(snapshot: Snapshot, rolloutId: string): RolloutRow | null {
  return documentOf(snapshot, rolloutKey(rolloutId), 'rollout');
}

export function readActiveRollouts(snapshot: Snapshot): ActiveRollout[] {
  return documentOf(snapshot, ACTIVE_KEY, 'active')?.rollouts ?? [];
}

export function readRolloutScope(
  snapshot: Snapshot,
  rolloutId: string,
  scope: string,
): RolloutScopeRow | null {
  return documentOf(snapshot, rolloutScopeKey(rolloutId, scope), 'scope');
}

/** The put that stores the tenant's active rollouts. */
export function activeRolloutsPut(rollouts: ActiveRollout[]): Put {
  return rolloutPut(ACTIVE_KEY, { kind: 'active', rollouts });
}

export function readRunningCutovers(snapshot: Snapshot): RunningCutover[] {
  return documentOf(snapshot, RUNNING_CUTOVERS_KEY, 'cutovers')?.cutovers ?? [];
}

/** The put that stores the tenant's running plain cutovers. */
export function runningCutoversPut(cutovers: RunningCutover[]): Put {
  return rolloutPut(RUNNING_CUTOVERS_KEY, { kind: 'cutovers', cutovers });
}

/**
 * The cutover's cursor: where its next chunk starts (0 before its first, or for one started
 * without a cursor), its listing while its list is being built, and where a rollback's next page
 * of intents starts, when one was cancelled.
 */
export function readCutoverCursor(snapshot: Snapshot, cutoverId: string): CutoverCursorRow {
  return (
    documentOf(snapshot, cutoverCursorRef(cutoverId).key, 'cursor') ?? { kind: 'cursor', next: 0 }
  );
}

export function cutoverCursorPut(
  cutoverId: string,
  cursor: {
    next: number;
    listing?: CutoverListing | undefined;
    after?: string | undefined;
    intents?: IntentsCursor | undefined;
  },
): Put {
  const row: CutoverCursorRow = { kind: 'cursor', next: cursor.next };
  if (cursor.listing !== undefined) row.listing = cursor.listing;
  if (cursor.after !== undefined) row.after = cursor.after;
  if (cursor.intents !== undefined) row.intents = cursor.intents;
  return rolloutPut(cutoverCursorRef(cutoverId).key, row);
}

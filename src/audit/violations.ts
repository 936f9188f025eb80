/**
 * What `verify` can find wrong in an audit history. Each kind names one broken invariant of
 * SEMANTICS.md ("Audit and verification"); docs/verify.md lists the same table.
 */

export const VIOLATION_KINDS = {
  seq_not_increasing: 'An entry does not have a higher seq than the entry before it.',
  fence_regressed: "A scope's fence went below the fence it already had.",
  fence_repeated:
    'A grant or revocation issued the fence the scope already had instead of a higher one.',
  fence_mismatch:
    'An entry that may not move the fence reports a higher fence than the history gives the scope.',
  stale_commit_accepted: "A commit was accepted with a fence other than the scope's current fence.",
  stale_accepted_after_cutover:
    'A commit, renew or release carrying a fence older than a cutover of its scope was accepted.',
  stale_lease_op_accepted:
    "A renew or release was accepted with a fence other than the scope's current fence.",
  lease_op_by_non_holder:
    'A renew was accepted for a caller that was not the current holder, or for no holder.',
  commit_without_holder:
    'A commit was accepted while the scope had no holder (released or cancelled).',
  commit_after_lease_expiry:
    "A commit was accepted at or after the holder's lease expiry, by store time.",
  accepted_on_deleted_scope:
    'A commit, renew, release, reacquire, cancel or delete was accepted on a deleted scope.',
  acquire_over_live_lease: 'An acquire granted authority while another holder had a live lease.',
  holder_mismatch:
    'An accepted entry names a holder other than the one the history gives the scope.',
  fence_holder_mismatch:
    'A rejected commit names a holder other than the one its presented fence was granted to (none for a fence never granted).',
  policy_changed_without_cutover:
    "An accepted entry other than a cutover changed, or disagreed with, the scope's pinned policy.",
  stale_write_accepted:
    "An accepted write expected a revision other than the record's current revision (a lost update).",
  revision_skipped: 'An accepted write produced a revision more than one above the previous one.',
  revision_reused: 'An accepted write produced a revision the record already had or had before.',
  effect_delivered_twice: 'An effect key was delivered a second time.',
  stale_dependency_accepted:
    "A commit was accepted although a dependency it read was not at the record's current revision.",
  dependency_mismatch:
    'A commit entry reports a revision of a dependency other than the one the history gives the record.',
  delivery_without_attempt:
    'A delivery outcome of an intent was recorded with no open audited attempt (claim) for it: more deliveries than attempts.',
  malformed_entry:
    'An entry lacks a field its kind and outcome require, or has an unknown kind or outcome.',
} as const;

export type ViolationKind = keyof typeof VIOLATION_KINDS;

export interface Violation {
  /** seq of the entry that broke the invariant. */
  seq: number;
  tenant: string;
  scope: string | null;
  kind: ViolationKind;
  /** What the history required at this point (a fence, a revision, a holder, a seq), or null. */
  expected: number | string | null;
  /** What the entry shows instead. */
  found: number | string | null;
  message: string;
  /** The record, for revision violations. */
  record?: string;
  /** The effect key, for effect violations. */
  effectKey?: string;
}

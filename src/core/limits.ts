/** Names and limits of HTTP-API.md. Every entry point validates against one Limits object. */

export interface Limits {
  maxReads: number;
  maxWrites: number;
  maxIntents: number;
  /** Serialized JSON bytes of one record value or intent payload. */
  maxValueBytes: number;
  maxListLimit: number;
  /**
   * Bytes of values one answer that lists them holds (core/answer-budget.ts): a page past its
   * first item stops before this total and carries a cursor.
   */
  maxPageBytes: number;
  minTtlMs: number;
  maxTtlMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxReads: 64,
  maxWrites: 64,
  maxIntents: 16,
  maxValueBytes: 256 * 1024,
  maxListLimit: 1000,
  maxPageBytes: 1024 * 1024,
  minTtlMs: 100,
  maxTtlMs: 86_400_000,
};

export const DEFAULT_LIST_LIMIT = 100;

/**
 * The most commits one `POST /v1/commits` (and `commitMany`) carries. 64 is the batch the
 * PostgreSQL and etcd group commits apply together, so a batch is one of theirs; 64 commits fit
 * the 1 MiB body at 16 KiB each; their answers (a few hundred bytes each without records' values)
 * stay far below the answer budget.
 */
export const MAX_BATCH_COMMITS = 64;

/** A token's label. */
export const MAX_LABEL_LENGTH = 256;

/**
 * Scope names, record names, holders, operation ids, task ids, effect keys, policy versions.
 * `.` and `..` are excluded: URL clients resolve them as path segments even when encoded.
 */
export const NAME_PATTERN = /^(?!\.{1,2}$)[A-Za-z0-9._:/@-]{1,256}$/;
/** The longest name NAME_PATTERN accepts. */
export const MAX_NAME_LENGTH = 256;
export const TARGET_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const NAME_RULE = '1 to 256 characters of A-Z a-z 0-9 . _ : / @ - (not . or ..)';
export const TARGET_RULE = '1 to 128 characters of A-Z a-z 0-9 . _ : -';
export const TENANT_RULE = 'a lowercase letter or digit, then up to 62 of a-z 0-9 _ -';

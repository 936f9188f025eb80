/**
 * Bearer tokens: 256 random bits, shown once, stored only as their sha256. Shared by the admin
 * endpoint, `fencegate token create` and the first-run bootstrap of `fencegate serve`.
 */
import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MAX_LABEL_LENGTH } from '../core/limits.js';
import { requireTakeOverPrefixes } from '../core/take-over-right.js';
import { TOKEN_PREFIX } from '../core/token-format.js';
import { optionalText, requireTenant } from '../core/validate.js';
import { fail } from '../errors.js';
import type { Store } from '../store/store.js';
import type { TokenRecord, TokenRole } from '../types.js';

/**
 * Tokens stored under this tenant are admin tokens. No tenant can be named like this (tenant names
 * start with a lowercase letter or digit), so an admin token can never act for a tenant.
 */
export const ADMIN_TENANT = '_admin';

/**
 * A token this server's store does not hold. The usual cause is a token created on another store
 * (`token create` run in another folder, or without the server's --store).
 */
export const UNKNOWN_TOKEN_MESSAGE =
  "unknown token: this server's store holds no such token; create one with `token create` " +
  "naming the server's store (--store URL or FENCEGATE_STORE), or use a token it printed";

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * sha256 in hex. Every authenticated request hashes its token: the one-shot `crypto.hash` (Node
 * 20.12 and later) does it without building a Hash object.
 */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text).digest('hex');

export function hashToken(token: string): string {
  return sha256Hex(token);
}

/** Compares two secrets in constant time (over their digests, so lengths may differ). */
export function sameSecret(a: string, b: string): boolean {
  return sameHash(hashToken(a), hashToken(b));
}

/** Compares two hashToken digests in constant time. */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

export interface IssueTokenRequest {
  tenant: string;
  role: TokenRole;
  label?: string | undefined;
  /** Scope prefixes a worker token may take over (core/take-over-right.ts). */
  mayTakeOver?: string[] | undefined;
}

export interface IssuedToken {
  record: TokenRecord;
  /** The token itself: shown once, never stored. */
  token: string;
}

/** The checked request, with its take-over prefixes (an empty list for none). */
export interface ValidTokenRequest {
  tenant: string;
  role: TokenRole;
  label: string | null;
  mayTakeOver: string[];
}

export function validateTokenRequest(input: IssueTokenRequest): ValidTokenRequest {
  const tenant = requireTenant(input.tenant);
  if (input.role !== 'worker' && input.role !== 'operator') {
    fail('invalid_request', 'role must be worker or operator', { field: 'role' });
  }
  const label = optionalText(input.label, 'label', MAX_LABEL_LENGTH) ?? null;
  const mayTakeOver = requireTakeOverPrefixes(input.mayTakeOver, input.role);
  return { tenant, role: input.role, label, mayTakeOver };
}

export async function issueToken(store: Store, request: IssueTokenRequest): Promise<IssuedToken> {
  const { token, record } = newToken(request);
  return { record: await store.createToken(record), token };
}

/** Stores a new admin token. */
export async function issueAdminToken(store: Store, label: string): Promise<IssuedToken> {
  const { token, record } = newAdminToken(label);
  return { record: await store.createToken(record), token };
}

/** A new token and the record to store for it (not stored yet). */
export interface NewToken {
  record: Omit<TokenRecord, 'createdAt'>;
  token: string;
}

export function newToken(request: IssueTokenRequest): NewToken {
  return tokenRecord(validateTokenRequest(request));
}

/** An admin token (first run), kept in the store like any other token. */
export function newAdminToken(label: string): NewToken {
  // The role column is unused for admin tokens: the reserved tenant is what makes them admin.
  return tokenRecord({ tenant: ADMIN_TENANT, role: 'operator', label, mayTakeOver: [] });
}

/**
 * What a token listing shows: never the token or its hash. Admin tokens show role `admin`;
 * `mayTakeOver` is there only for a token that has the take-over right.
 */
export interface TokenSummary {
  id: string;
  tenant: string;
  role: TokenRole | 'admin';
  label: string | null;
  mayTakeOver?: string[];
  createdAt: number;
}

export function summarizeToken(record: TokenRecord): TokenSummary {
  return {
    id: record.id,
    tenant: record.tenant,
    role: record.tenant === ADMIN_TENANT ? 'admin' : record.role,
    label: record.label,
    ...takeOverField(record),
    createdAt: record.createdAt,
  };
}

/** `{ mayTakeOver }` for a token with the take-over right, `{}` otherwise (answers omit it). */
export function takeOverField(record: Pick<TokenRecord, 'mayTakeOver'>): {
  mayTakeOver?: string[];
} {
  const prefixes = record.mayTakeOver ?? [];
  return prefixes.length === 0 ? {} : { mayTakeOver: prefixes };
}

function tokenRecord({ tenant, role, label, mayTakeOver }: ValidTokenRequest): NewToken {
  const token = generateToken();
  return {
    record: {
      id: `tok_${randomBytes(9).toString('base64url')}`,
      tenant,
      role,
      label,
      hash: hashToken(token),
      ...takeOverField({ mayTakeOver }),
    },
    token,
  };
}

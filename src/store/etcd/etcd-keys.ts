/**
 * The key layout. Every key starts with `<prefix>/` and a short family tag; tenant names contain no
 * `/` and names no NUL, so `/` after the tenant and NUL inside a name part keep families and
 * tenants apart, and a prefix range of a family reads exactly one tenant's (or one scope's) rows.
 *
 *   s/<tenant>/<scope>                       scope row
 *   fg/<tenant>/<scope>\0<fence>             whom the fence was granted to (kept; see retention)
 *   r/<tenant>/<scope>\0<name>               record or tombstone
 *   d/<tenant>/<scope>\0<name>\0<revision>   a deletion of a record at a revision
 *   o/<tenant>/<operationId>                 a commit's stored outcome
 *   i/<tenant>/<effectKey>                   intent
 *   is/<tenant>/<scope>\0<effectKey>         the scope's intents (empty values, written once)
 *   io/<tenant>/<effectKey>                  open intents (pending, unknown, claimed): a head of
 *                                            the intent (what a claim chooses by), always written
 *                                            in the same Txn as i/
 *   p/<tenant>/<version>                     policy
 *   c/<tenant>/<cutoverId>                   cutover
 *   cs/<tenant>/<cutoverId>\0<scope>         a scope a cutover has moved, with its new fence
 *   j/<tenant>/<jobId>                       job
 *   ro/<tenant>/<key>                        a rollout document (core/rollout-rows.ts)
 *   a/<tenant>/<unique>                      the audit entries one Txn wrote for the tenant
 *   t/<hash>, ti/<id>                        tokens, by hash and by id
 *   ar                                       the highest audit seq pruned (retention)
 *   vc, vcc/<generation>/<n>                 the verified checkpoint retention pruned through
 *   fr                                       first-run tokens were made
 *
 * A new family (retention marks, token listings, …) is one more tag here.
 */
import type { RangeRef, Ref } from '../../core/plan/transition.js';

export class EtcdKeys {
  constructor(private readonly prefix: string) {}

  family(tag: string, tenant?: string): string {
    return tenant === undefined ? `${this.prefix}/${tag}/` : `${this.prefix}/${tag}/${tenant}/`;
  }

  ref(tenant: string, ref: Ref): string {
    switch (ref.type) {
      case 'scope':
        return this.family('s', tenant) + ref.scope;
      case 'fenceGrant':
        return `${this.family('fg', tenant)}${ref.scope}\0${ref.fence}`;
      case 'record':
        return `${this.family('r', tenant)}${ref.scope}\0${ref.name}`;
      case 'deletion':
        return `${this.family('d', tenant)}${ref.scope}\0${ref.name}\0${ref.revision}`;
      case 'operation':
        return this.family('o', tenant) + ref.operationId;
      case 'intent':
        return this.family('i', tenant) + ref.effectKey;
      case 'policy':
        return this.family('p', tenant) + ref.version;
      case 'cutover':
        return this.family('c', tenant) + ref.cutoverId;
      case 'cutoverStep':
        return `${this.family('cs', tenant)}${ref.cutoverId}\0${ref.scope}`;
      case 'job':
        return this.family('j', tenant) + ref.jobId;
      case 'rollout':
        return this.family('ro', tenant) + ref.key;
    }
  }

  /** The key prefix holding a range's rows. */
  range(tenant: string, range: RangeRef): string {
    switch (range.type) {
      case 'scopeRecords':
        return `${this.family('r', tenant)}${range.scope}\0`;
      case 'scopeIntents':
        return `${this.family('is', tenant)}${range.scope}\0`;
      case 'openIntents':
        return this.family('io', tenant);
      case 'scopes':
        return this.family('s', tenant) + range.prefix;
      case 'cutoverSteps':
        return `${this.family('cs', tenant)}${range.cutoverId}\0`;
      case 'rolloutKeys':
        return this.family('ro', tenant) + range.prefix;
      case 'page': {
        // Not a prefix: a page's name among the ranges one call has read. Its keys are those of
        // its range after its position (pageKeys), read with its limit; a cutover's list is in
        // the cutover's value.
        const { of } = range;
        const whole =
          of.type === 'cutoverScopes'
            ? this.ref(tenant, { type: 'cutover', cutoverId: of.cutoverId })
            : this.range(tenant, of);
        return `${whole}\0page\0${range.after}\0${range.limit}`;
      }
    }
  }

  /**
   * Where a page's keys start and end, and how many chars of a key come before its name: the
   * keys of its range that sort after the one of its position.
   */
  pageKeys(
    tenant: string,
    page: {
      of:
        | { type: 'scopes' | 'rolloutKeys'; prefix: string }
        | { type: 'scopeIntents'; scope: string };
      after: string;
    },
  ): { start: string; prefix: string; family: number } {
    if (page.of.type === 'scopeIntents') {
      // The scope's index keys, named by effect key.
      const prefix = this.range(tenant, page.of);
      const after = page.after === '' ? prefix : `${prefix}${page.after}\0`;
      return { start: after, prefix, family: prefix.length };
    }
    const family = this.range(tenant, { type: page.of.type, prefix: '' });
    const prefix = family + page.of.prefix;
    // The smallest key after the position's own: names hold no NUL.
    const after = family + page.after + '\0';
    return { start: after > prefix ? after : prefix, prefix, family: family.length };
  }

  scopeIntent(tenant: string, scope: string, effectKey: string): string {
    return `${this.family('is', tenant)}${scope}\0${effectKey}`;
  }

  openIntent(tenant: string, effectKey: string): string {
    return this.family('io', tenant) + effectKey;
  }

  audit(tenant: string, unique: string): string {
    return this.family('a', tenant) + unique;
  }

  token(hash: string): string {
    return this.family('t') + hash;
  }

  tokenId(id: string): string {
    return this.family('ti') + id;
  }

  auditPrunedThrough(): string {
    return `${this.prefix}/ar`;
  }

  /** The hash of the entry the audit log is pruned through (written with the mark). */
  auditPrunedHash(): string {
    return `${this.prefix}/arh`;
  }

  /** The store's id, made at random by the first process that needs it. */
  storeId(): string {
    return `${this.prefix}/id`;
  }

  /** Where the verified checkpoint retention pruned through is: its last seq and its chunks. */
  verifiedCheckpoint(): string {
    return `${this.prefix}/vc`;
  }

  /** The chunks of one stored verified checkpoint (a checkpoint may exceed one etcd value). */
  verifiedCheckpointChunks(generation: string): string {
    return `${this.prefix}/vcc/${generation}/`;
  }

  /** Present once the store's first-run tokens were made: they are made once, ever. */
  firstRunTokens(): string {
    return `${this.prefix}/fr`;
  }
}

/** The end of the range of every key starting with `prefix` (etcd's range_end). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i -= 1) {
    if ((end[i] ?? 0) < 0xff) {
      end[i] = (end[i] ?? 0) + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** Token listings and the first-run bootstrap on etcd: t/<hash> holds the record, ti/<id> its hash. */
import { CompareResult, CompareTarget } from 'etcd3';
import type { IRequestOp } from 'etcd3';
import type { TokenRecord } from '../../types.js';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd, type EtcdKeys } from './etcd-keys.js';
import { parseValue, scanPrefix } from './etcd-scan.js';

/** Every token (one tenant's when given), oldest first, then by id. */
export async function listTokens(
  connection: EtcdConnection,
  keys: EtcdKeys,
  tenant?: string,
): Promise<TokenRecord[]> {
  const tokens: TokenRecord[] = [];
  for await (const kv of scanPrefix(connection, keys.family('t'))) {
    const token = parseValue<TokenRecord>(kv);
    if (tenant === undefined || token.tenant === tenant) tokens.push(token);
  }
  return tokens.sort(
    (a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** The two puts that store a token: by hash, and its id naming the hash. */
export function tokenPuts(keys: EtcdKeys, record: TokenRecord): IRequestOp[] {
  return [
    {
      request_put: {
        key: Buffer.from(keys.token(record.hash)),
        value: Buffer.from(JSON.stringify(record)),
      },
    },
    { request_put: { key: Buffer.from(keys.tokenId(record.id)), value: Buffer.from(record.hash) } },
  ];
}

/**
 * Stores the tokens in one Txn whose compare asks that no token id key exists at all (etcd
 * compares every key of the range, and an empty range as one absent key): of several processes
 * bootstrapping at once, exactly one succeeds. The first-run mark must be absent too (and is put).
 */
export async function createTokensIfNone(
  connection: EtcdConnection,
  keys: EtcdKeys,
  records: TokenRecord[],
): Promise<TokenRecord[] | null> {
  const ids = Buffer.from(keys.family('ti'));
  const result = await connection.writeTxn({
    compare: [
      {
        key: ids,
        range_end: prefixEnd(ids),
        target: CompareTarget.Create,
        result: CompareResult.Equal,
        create_revision: 0,
      },
      // Once per store, ever: a store whose tokens were all revoked gets no new ones.
      {
        key: Buffer.from(keys.firstRunTokens()),
        target: CompareTarget.Create,
        result: CompareResult.Equal,
        create_revision: 0,
      },
    ],
    success: [
      ...records.flatMap((record) => tokenPuts(keys, record)),
      {
        request_put: {
          key: Buffer.from(keys.firstRunTokens()),
          value: Buffer.from(String(records[0]?.createdAt ?? 0)),
        },
      },
    ],
  });
  if (!result.ok) throw connection.writeError(result.error, undefined);
  return result.response.succeeded ? records : null;
}

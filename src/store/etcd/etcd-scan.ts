/** Reading every key of a prefix, page by page, in key order. */
import type { IKeyValue } from 'etcd3';
import type { EtcdConnection } from './etcd-connection.js';
import { prefixEnd } from './etcd-keys.js';

/** Rows per range read: a row may hold a 256 KiB value. */
const KEYS_PER_PAGE = 100;

/**
 * Every key of `prefix` after `startAfter` (from the first one when ''), in key order, read
 * `keysPerRead` at a time: a reader that stops early has held at most one read more.
 */
export async function* scanPrefix(
  connection: EtcdConnection,
  prefix: string,
  startAfter = '',
  keysPerRead = KEYS_PER_PAGE,
): AsyncGenerator<IKeyValue> {
  const end = prefixEnd(Buffer.from(prefix));
  let start = startAfter === '' ? Buffer.from(prefix) : afterKey(startAfter);
  for (;;) {
    const response = await connection.range({ key: start, range_end: end, limit: keysPerRead });
    for (const kv of response.kvs) yield kv;
    const last = response.kvs.at(-1);
    if (!response.more || last === undefined) return;
    start = afterKey(last.key);
  }
}

/** The first key after `key`. */
export function afterKey(key: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from(key), Buffer.from([0])]);
}

export function parseValue<T>(kv: IKeyValue): T {
  return JSON.parse(kv.value.toString()) as T;
}

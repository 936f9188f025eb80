/** `etcd://host:port[,host:port…][?prefix=NAME]`: the members to dial and the key prefix. */
import { fail } from '../../errors.js';

export interface EtcdTarget {
  /** host:port of every member given. */
  hosts: string[];
  /** Every key of this store starts with it; stores with other prefixes share nothing. */
  prefix: string;
}

export const DEFAULT_ETCD_PREFIX = 'fencegate';

const HOST_PORT = /^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/;
const PREFIX = /^[A-Za-z0-9._-]{1,64}$/;

export function isEtcdUrl(url: string): boolean {
  return url.startsWith('etcd://');
}

export function parseEtcdUrl(url: string): EtcdTarget {
  const rest = url.slice('etcd://'.length);
  const [hostPart = '', query = ''] = rest.split('?', 2);
  const hosts = hostPart.replace(/\/$/, '').split(',');
  for (const host of hosts) {
    if (!HOST_PORT.test(host)) {
      fail(
        'invalid_request',
        // A user part is never echoed: it may carry a password.
        `etcd store URL: "${host.replace(/^.*@/, '…@')}" is not host:port; use ` +
          'etcd://host:port[,host:port…] (credentials in the URL are not supported)',
      );
    }
  }
  const params = new URLSearchParams(query);
  for (const key of params.keys()) {
    if (key !== 'prefix')
      fail('invalid_request', `etcd store URL: unknown parameter ${key}; only prefix is allowed`);
  }
  const prefix = params.get('prefix') ?? DEFAULT_ETCD_PREFIX;
  if (!PREFIX.test(prefix)) {
    fail(
      'invalid_request',
      'etcd store URL: prefix must be 1 to 64 characters of A-Z a-z 0-9 . _ -',
    );
  }
  return { hosts, prefix };
}

/** Store URLs in messages, hints and logs carry no password, wherever the URL puts it. */
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/store/open.js';

describe('redactUrl', () => {
  it('hides the password of the user part, even one holding an unencoded @', () => {
    expect(redactUrl('postgres://app:secret@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(redactUrl('postgres://app:p@ss@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(redactUrl('etcd://root:etcdpw@10.0.0.1:2379')).toBe('etcd://root:***@10.0.0.1:2379');
  });

  it('hides password and sslpassword given as query parameters', () => {
    expect(redactUrl('postgres://app@db/app?password=QS&schema=s')).toBe(
      'postgres://app@db/app?password=***&schema=s',
    );
    expect(redactUrl('postgres://app@db/app?schema=s&sslpassword=QS')).toBe(
      'postgres://app@db/app?schema=s&sslpassword=***',
    );
  });

  it('leaves a URL without a password as it is', () => {
    for (const url of [
      'sqlite:./fencegate.db',
      'postgres://app@db/app?schema=s',
      'etcd://h:2379',
    ]) {
      expect(redactUrl(url)).toBe(url);
    }
  });
});

describe('an etcd URL with a user part', () => {
  it('is refused without echoing the password', async () => {
    const { parseEtcdUrl } = await import('../../src/store/etcd/etcd-url.js');
    expect(() => parseEtcdUrl('etcd://root:etcdpw@127.0.0.1:2379')).toThrow(/credentials/);
    expect(() => parseEtcdUrl('etcd://root:etcdpw@127.0.0.1:2379')).not.toThrow(/etcdpw/);
  });
});

/**
 * The registry of store kinds: every URL form it lists opens through openStore's one path, and a
 * URL of no kind is refused with every form the registry knows. (A driver that is not installed is
 * tested on the packed package, where it really is absent: test/package/package.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { STORE_KINDS, storeKindOf } from '../../src/store/registry.js';

describe('store kinds', () => {
  it('knows sqlite, postgres and etcd, each by its own scheme', () => {
    expect(STORE_KINDS.map((kind) => kind.name)).toEqual(['sqlite', 'postgres', 'etcd']);
    expect(storeKindOf('sqlite::memory:')?.name).toBe('sqlite');
    expect(storeKindOf('postgresql://u@h/db')?.name).toBe('postgres');
    expect(storeKindOf('etcd://127.0.0.1:2379')?.name).toBe('etcd');
    expect(storeKindOf('mysql://h/db')).toBeUndefined();
  });

  it('opens a sqlite::memory: store through the lazily imported module', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      expect(store.kind).toBe('sqlite');
      expect((await store.acquire('t', { scope: 's', holder: 'h', ttlMs: 1000 })).fence).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('refuses a URL of no kind with invalid_request listing every URL form, password hidden', async () => {
    const error: unknown = await openStore('mysql://me:secret@h/db').catch((e: unknown) => e);
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
    const message = (error as Error).message;
    expect(message).toContain('mysql://me:***@h/db');
    expect(message).not.toContain('secret');
    for (const form of STORE_KINDS.flatMap((kind) => kind.urlForms)) {
      expect(message).toContain(form);
    }
  });
});

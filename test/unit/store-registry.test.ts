/**
 * The registry of store kinds: every URL form it lists opens through openStore's one path, and a
 * URL of no kind is refused with every form the registry knows. (A driver that is not installed is
 * tested on the packed package, where it really is absent: test/package/package.test.ts.) A kind
 * registered from outside opens the same way, and never takes a name or scheme already known.
 */
import { describe, expect, it } from 'vitest';
import { isFencegateError } from '../../src/errors.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { openStore } from '../../src/store/open.js';
import {
  registerStoreKind,
  STORE_KINDS,
  storeKindOf,
  type StoreKind,
} from '../../src/store/registry.js';

/** A kind of in-memory stores, one per name: `memtest:NAME`. */
function memoryKind(overrides: Partial<StoreKind> = {}): StoreKind {
  return {
    name: 'memtest',
    urlForms: ['memtest:NAME'],
    description: 'the in-memory reference store',
    packages: [],
    matches: (url) => url.startsWith('memtest:'),
    load: () => Promise.resolve((_url, options) => Promise.resolve(new MemoryStore(options))),
    ...overrides,
  };
}

/** The invalid_request message `register` is refused with. */
function refusal(register: () => unknown): string {
  try {
    register();
  } catch (error) {
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
    return (error as Error).message;
  }
  throw new Error('the kind was registered');
}

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

describe('registering a store kind', () => {
  it('opens a registered kind by URL, and no longer once it is removed', async () => {
    const unregister = registerStoreKind(memoryKind());
    try {
      const store = await openStore('memtest:a');
      expect(store.kind).toBe('memory');
      expect((await store.acquire('t', { scope: 's', holder: 'h', ttlMs: 1000 })).fence).toBe(1);
      await store.close();
    } finally {
      unregister();
    }
    const error: unknown = await openStore('memtest:a').catch((e: unknown) => e);
    expect(isFencegateError(error) && error.code).toBe('invalid_request');
  });

  it('lists the registered kinds and their URL forms when a URL is of none', async () => {
    const unregister = registerStoreKind(memoryKind());
    try {
      const error: unknown = await openStore('mysql://h/db').catch((e: unknown) => e);
      expect((error as Error).message).toContain(
        'the store kinds are sqlite, postgres, etcd, memtest',
      );
      expect((error as Error).message).toContain('memtest:NAME');
    } finally {
      unregister();
    }
  });

  it('refuses a name already taken, by a built-in or a registered kind', () => {
    expect(refusal(() => registerStoreKind(memoryKind({ name: 'SQLite' })))).toBe(
      'store kind "SQLite" cannot be registered: the built-in store kind "sqlite" already has ' +
        'this name; choose another',
    );
    const unregister = registerStoreKind(memoryKind());
    try {
      const other = memoryKind({
        urlForms: ['other:NAME'],
        matches: (u) => u.startsWith('other:'),
      });
      expect(refusal(() => registerStoreKind(other))).toContain(
        'the registered store kind "memtest" already has this name',
      );
    } finally {
      unregister();
    }
  });

  it('refuses a URL scheme a built-in kind opens, so none is shadowed', () => {
    for (const scheme of ['sqlite', 'postgresql', 'ETCD']) {
      const kind = memoryKind({ name: 'mine', urlForms: [`${scheme}://h/db`] });
      expect(refusal(() => registerStoreKind(kind))).toMatch(
        new RegExp(`the URL scheme ${scheme.toLowerCase()}: belongs to the built-in store kind`),
      );
    }
    const greedy = memoryKind({ name: 'greedy', urlForms: ['greedy:X'], matches: () => true });
    expect(refusal(() => registerStoreKind(greedy))).toContain(
      'the URL sqlite:PATH[?synchronous=normal] belongs to the built-in store kind "sqlite"; ' +
        'choose another scheme',
    );
    expect(storeKindOf('sqlite::memory:')?.name).toBe('sqlite');
  });

  it('refuses a malformed kind, naming the field to fix', () => {
    expect(refusal(() => registerStoreKind(memoryKind({ urlForms: [] })))).toContain(
      'urlForms of "memtest" must list at least one URL form',
    );
    expect(refusal(() => registerStoreKind(memoryKind({ name: 'two words' })))).toContain(
      'name must be a word',
    );
    const noLoad = { ...memoryKind(), load: undefined } as unknown as StoreKind;
    expect(refusal(() => registerStoreKind(noLoad))).toContain('needs the functions');
    expect(storeKindOf('memtest:a')).toBeUndefined();
  });
});

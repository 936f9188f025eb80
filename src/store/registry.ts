/**
 * The kinds of store fencegate can open, each known by its URL scheme. A kind's module is imported
 * only when a URL of that kind is opened: the PostgreSQL and etcd drivers are optional peer
 * dependencies, so a user of SQLite never loads (or installs) them, and a missing driver is
 * reported by name when its URL is used. `openStore`, the CLI's usage text and the tests' store
 * list all read this one list. A store written outside fencegate joins it with `registerStoreKind`;
 * it may not take a name or URL scheme already known, so a built-in kind is never shadowed.
 */
import { fail } from '../errors.js';
import type { OpenStoreOptions } from './open.js';
import { isEtcdUrl } from './etcd/etcd-url.js';
import { isPostgresUrl } from './postgres/postgres-url.js';
import { isSqliteUrl, parseSqliteUrl } from './sqlite/sqlite-url.js';
import { requireWellFormed, schemesOf } from './store-kind-shape.js';
import type { Store } from './store.js';

/** Opens a store of one kind from its URL; what a kind's module provides once imported. */
export type StoreOpener = (url: string, options: OpenStoreOptions) => Promise<Store>;

export interface StoreKind {
  /** The kind's name, as `Store.kind` reports it. */
  readonly name: string;
  /** The URL forms the kind accepts, as the usage text shows them. */
  readonly urlForms: readonly string[];
  /** One line on what the store is and when to choose it. */
  readonly description: string;
  /** The optional peer packages the kind needs installed next to fencegate. */
  readonly packages: readonly string[];
  /** Whether `url` names a store of this kind. */
  matches(url: string): boolean;
  /** Imports the kind's module (its drivers with it). */
  load(): Promise<StoreOpener>;
}

export const STORE_KINDS: readonly StoreKind[] = [
  {
    name: 'sqlite',
    urlForms: ['sqlite:PATH[?synchronous=normal]', 'sqlite::memory:'],
    description: 'one file on one host, embedded (the default)',
    packages: [],
    matches: isSqliteUrl,
    load: async () => {
      const { SqliteStore } = await import('./sqlite/sqlite-store.js');
      return (url, options) => {
        const { path, synchronous } = parseSqliteUrl(url);
        return Promise.resolve(
          SqliteStore.open({
            path,
            ...options,
            ...(synchronous === undefined ? {} : { synchronous }),
          }),
        );
      };
    },
  },
  {
    name: 'postgres',
    urlForms: ['postgres://user:password@host:port/database[?schema=NAME]'],
    description: 'PostgreSQL, shared by every server',
    packages: ['pg'],
    matches: isPostgresUrl,
    load: async () => {
      const { PostgresStore } = await import('./postgres/postgres-store.js');
      return (url, options) => PostgresStore.open({ url, ...options });
    },
  },
  {
    name: 'etcd',
    urlForms: ['etcd://host:port[,host:port…][?prefix=NAME]'],
    description: 'an etcd cluster, shared by every server (with synchronized clocks)',
    packages: ['etcd3', '@grpc/grpc-js'],
    matches: isEtcdUrl,
    load: async () => {
      const { EtcdStore } = await import('./etcd/etcd-store.js');
      return (url, { deadlines, ...options }) =>
        EtcdStore.open({
          url,
          ...options,
          ...(deadlines === undefined
            ? {}
            : { callTimeoutMs: deadlines.callMs, operationTimeoutMs: deadlines.operationMs }),
        });
    },
  },
];

/** The kinds registered from outside, in the order they were registered. */
const registered: StoreKind[] = [];

/** The built-in kinds, then the registered ones. */
export function storeKinds(): readonly StoreKind[] {
  return [...STORE_KINDS, ...registered];
}

/**
 * Adds a store kind that `openStore` then opens by URL. Refused with `invalid_request` when the
 * kind is malformed, or when its name or one of its URL schemes is already taken. Returns a
 * function that removes the kind again.
 */
export function registerStoreKind(kind: StoreKind): () => void {
  requireWellFormed(kind);
  for (const known of storeKinds()) {
    if (known.name.toLowerCase() === kind.name.toLowerCase()) {
      return fail(
        'invalid_request',
        `store kind "${kind.name}" cannot be registered: ${describeKind(known)} already has ` +
          'this name; choose another',
        { kind: kind.name },
      );
    }
    const scheme = schemesOf(kind).find((taken) => takesScheme(known, taken));
    const theirs = known.urlForms.find((form) => kind.matches(form));
    if (scheme !== undefined || theirs !== undefined) {
      const what = scheme === undefined ? `URL ${theirs ?? ''}` : `URL scheme ${scheme}:`;
      return fail(
        'invalid_request',
        `store kind "${kind.name}" cannot be registered: the ${what} belongs to ` +
          `${describeKind(known)}; choose another scheme`,
        { kind: kind.name },
      );
    }
  }
  registered.push(kind);
  return () => {
    const at = registered.indexOf(kind);
    if (at !== -1) registered.splice(at, 1);
  };
}

/** The kind whose scheme `url` uses, or undefined. Built-in kinds are asked first. */
export function storeKindOf(url: string): StoreKind | undefined {
  return storeKinds().find((kind) => kind.matches(url));
}

/** Every accepted URL form, for messages: "sqlite:PATH, sqlite::memory:, … or etcd://…". */
export function storeUrlForms(): string {
  const forms = storeKinds().flatMap((kind) => kind.urlForms);
  return `${forms.slice(0, -1).join(', ')} or ${forms.at(-1) ?? ''}`;
}

/** The names of every kind, for messages: "sqlite, postgres, etcd". */
export function storeKindNames(): string {
  return storeKinds()
    .map((kind) => kind.name)
    .join(', ');
}

function describeKind(kind: StoreKind): string {
  const builtIn = STORE_KINDS.includes(kind);
  return `the ${builtIn ? 'built-in' : 'registered'} store kind "${kind.name}"`;
}

/** Whether `kind` already opens URLs of `scheme`, by its forms or by what it matches. */
function takesScheme(kind: StoreKind, scheme: string): boolean {
  return (
    schemesOf(kind).includes(scheme) || kind.matches(`${scheme}:`) || kind.matches(`${scheme}://`)
  );
}

/**
 * The kind's opener; a peer package that is not installed is refused by name, with the command
 * that installs it, rather than as a module resolution stack.
 */
export async function loadStoreKind(kind: StoreKind): Promise<StoreOpener> {
  try {
    return await kind.load();
  } catch (error) {
    const missing = kind.packages.find((name) => isMissingPackage(error, name));
    if (missing === undefined) throw error;
    return fail(
      'invalid_request',
      `the ${kind.name} store needs the package ${missing}, which is not installed: ` +
        `npm install ${kind.packages.join(' ')}`,
      { package: missing },
    );
  }
}

/** Node's answer when `import` cannot resolve the package `name` (ESM and CommonJS wordings). */
function isMissingPackage(error: unknown, name: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  return error.message.includes(`'${name}'`) || error.message.includes(`"${name}"`);
}

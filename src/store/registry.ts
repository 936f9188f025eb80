/**
 * The kinds of store fencegate can open, each known by its URL scheme. A kind's module is imported
 * only when a URL of that kind is opened: the PostgreSQL and etcd drivers are optional peer
 * dependencies, so a user of SQLite never loads (or installs) them, and a missing driver is
 * reported by name when its URL is used. `openStore`, the CLI's usage text and the tests' store
 * list all read this one list.
 */
import { fail } from '../errors.js';
import type { OpenStoreOptions } from './open.js';
import { isEtcdUrl } from './etcd/etcd-url.js';
import { isPostgresUrl } from './postgres/postgres-url.js';
import { isSqliteUrl, parseSqliteUrl } from './sqlite/sqlite-url.js';
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

/** The kind whose scheme `url` uses, or undefined. */
export function storeKindOf(url: string): StoreKind | undefined {
  return STORE_KINDS.find((kind) => kind.matches(url));
}

/** Every accepted URL form, for messages: "sqlite:PATH, sqlite::memory:, … or etcd://…". */
export function storeUrlForms(): string {
  const forms = STORE_KINDS.flatMap((kind) => kind.urlForms);
  return `${forms.slice(0, -1).join(', ')} or ${forms.at(-1) ?? ''}`;
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

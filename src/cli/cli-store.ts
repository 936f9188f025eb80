/**
 * The store a CLI command acts on: `--store URL`, else `FENCEGATE_STORE`, else the default file.
 * A command run from another folder than the server's, or with the store left out, would open
 * (and so create) a new empty SQLite file and act on it without a word: a command other than
 * `serve` refuses a SQLite path that does not exist unless it is told `--create-store`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEFAULT_STORE_URL, openStore, redactUrl } from '../store/open.js';
import { isSqliteUrl, parseSqliteUrl } from '../store/sqlite/sqlite-url.js';
import type { Store } from '../store/store.js';
import { stringOption, UsageError, type CliIo, type FlagValues } from './command.js';
import { loadStoreModules, STORE_MODULE_FLAG, storeModuleUsage } from './store-modules.js';

export const STORE_ENV = 'FENCEGATE_STORE';

/** The usage lines of `--store` and `--create-store`, aligned at `column`. */
export function storeFlagsUsage(column: number): string {
  const flag = (name: string, text: string) => `  ${name.padEnd(column - 2)}${text}`;
  return [
    flag('--store URL', `the store (env ${STORE_ENV}, default ${DEFAULT_STORE_URL})`),
    flag('--create-store', 'create the SQLite file when it does not exist yet'),
    storeModuleUsage(column),
  ].join('\n');
}

/** The `--create-store` and `--store-module` flags of the commands that open a store. */
export const OPEN_STORE_FLAGS = {
  'create-store': { type: 'boolean' },
  ...STORE_MODULE_FLAG,
} as const;

export function cliStoreUrl(flags: FlagValues, io: CliIo): string {
  return stringOption(flags, 'store', io.env, STORE_ENV, DEFAULT_STORE_URL);
}

/**
 * Refuses a `sqlite:PATH` whose file does not exist: opening it would create a new, empty store.
 * `remedy` says what else the caller may do (e.g. `--create-store`).
 */
export function requireExistingStore(url: string, remedy: string): void {
  if (!isSqliteUrl(url)) return;
  let path: string;
  try {
    path = parseSqliteUrl(url).path;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (path === ':memory:' || existsSync(path)) return;
  throw new UsageError(
    `no store at ${resolve(path)}: opening ${redactUrl(url)} would create a new, empty store. ` +
      `Name the server's store with --store URL or ${STORE_ENV}${remedy}`,
  );
}

/**
 * Opens the command's store, after the store modules that register its kind; a missing SQLite
 * file is created only with --create-store.
 */
export async function openCliStore(flags: FlagValues, io: CliIo): Promise<Store> {
  const url = cliStoreUrl(flags, io);
  if (flags['create-store'] !== true) {
    requireExistingStore(url, ', or pass --create-store to create it');
  }
  await loadStoreModules(flags, io, url);
  return openStore(url);
}

/**
 * `--store URL` as a shell argument that names the same store from any folder: a relative SQLite
 * path is made absolute, and the URL is quoted when the shell would read it otherwise.
 */
export function storeArgument(url: string): string {
  return `--store ${shellWord(absoluteStoreUrl(url))}`;
}

function absoluteStoreUrl(url: string): string {
  if (!isSqliteUrl(url)) return url;
  const rest = url.slice('sqlite:'.length);
  const mark = rest.indexOf('?');
  const path = mark === -1 ? rest : rest.slice(0, mark);
  if (path === ':memory:' || path === '') return url;
  return `sqlite:${resolve(path)}${mark === -1 ? '' : rest.slice(mark)}`;
}

function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

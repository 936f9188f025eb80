/**
 * `--store-module MODULE` (repeatable) or `FENCEGATE_STORE_MODULES` (comma-separated): modules
 * imported before a command opens its store, each registering a store kind written outside
 * fencegate (`registerStoreKind`), so that `--store` may name a URL of that kind. A module that
 * cannot be imported, or that registers nothing, is the caller's mistake and said so in one line.
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { redactUrl } from '../store/open.js';
import { storeKindNames, storeKindOf, storeKinds, type StoreKind } from '../store/registry.js';
import { UsageError, type CliIo, type FlagValues } from './command.js';

export const STORE_MODULES_ENV = 'FENCEGATE_STORE_MODULES';

/** The flag of every command that opens a store. */
export const STORE_MODULE_FLAG = { 'store-module': { type: 'string', multiple: true } } as const;

/** The usage line of `--store-module`, aligned at `column`. */
export function storeModuleUsage(column: number): string {
  const pad = ' '.repeat(column);
  return [
    `  ${'--store-module M'.padEnd(column - 2)}import M (a file path or a package) before opening the store:`,
    `${pad}it registers a store kind of its own (docs/adapters.md); repeat for`,
    `${pad}several (env ${STORE_MODULES_ENV}, comma-separated)`,
  ].join('\n');
}

/**
 * The kinds each module registered when it was imported. A module is imported once per process;
 * a command run again in the same process finds what it registered here.
 */
const registeredBy = new Map<string, readonly StoreKind[]>();

/**
 * Imports the store modules the command names, then requires that `url` is of a known kind when
 * any was named. Throws a UsageError that says what to fix.
 */
export async function loadStoreModules(flags: FlagValues, io: CliIo, url: string): Promise<void> {
  const modules = storeModuleNames(flags, io.env);
  if (modules.length === 0) return;
  const kinds: StoreKind[] = [];
  for (const module of modules) kinds.push(...(await importStoreModule(module)));
  if (storeKindOf(url) !== undefined) return;
  const names = kinds.map((kind) => kind.name).join(', ');
  throw new UsageError(
    `no store kind opens ${redactUrl(url)}: the store modules ${modules.join(', ')} ` +
      `registered ${names}, and the store kinds are ${storeKindNames()}. Name a store URL of ` +
      'one of them, or the module that registers its kind',
  );
}

/** `--store-module`, every one given, else the comma-separated environment variable. */
function storeModuleNames(flags: FlagValues, env: Record<string, string | undefined>): string[] {
  const flag = flags['store-module'];
  const given = Array.isArray(flag) ? flag.map(String) : (env[STORE_MODULES_ENV] ?? '').split(',');
  const names = given.map((name) => name.trim());
  if (Array.isArray(flag) && names.includes('')) {
    throw new UsageError('--store-module needs a module: a file path or a package name');
  }
  return [...new Set(names.filter((name) => name !== ''))];
}

/** Imports one module and answers the kinds it registered; none is a usage error. */
async function importStoreModule(module: string): Promise<readonly StoreKind[]> {
  const specifier = moduleSpecifier(module);
  const known = registeredBy.get(specifier);
  if (known !== undefined) return known;
  const before = new Set(storeKinds());
  try {
    await import(specifier);
  } catch (error) {
    if (isNotFound(error, specifier)) {
      throw new UsageError(
        `store module ${module}: no file at ${resolve(module)}, and no installed package of ` +
          'this name; name a module file (a path from the current folder) or install the package',
      );
    }
    throw new UsageError(`store module ${module} could not be imported: ${firstLine(error)}`);
  }
  const added = storeKinds().filter((kind) => !before.has(kind));
  if (added.length === 0) {
    throw new UsageError(
      `store module ${module} registered no store kind: when imported, it must call ` +
        'registerStoreKind from fencegate/store or fencegate/adapter (of the fencegate this ' +
        'command runs)',
    );
  }
  registeredBy.set(specifier, added);
  return added;
}

/**
 * A file path is resolved from the current folder (`./store.js`, `/abs/store.js`, or any name
 * of an existing file); anything else is a package name, imported as fencegate imports its own.
 */
function moduleSpecifier(module: string): string {
  const path = resolve(module);
  const isPath = module.startsWith('.') || isAbsolute(module) || existsSync(path);
  if (!isPath) return module;
  if (!existsSync(path)) {
    throw new UsageError(
      `store module ${module}: no file at ${path}; name a module file (a path from the ` +
        'current folder) or an installed package',
    );
  }
  return pathToFileURL(path).href;
}

/** Whether the import failed because `specifier` itself, not one of its imports, was not found. */
function isNotFound(error: unknown, specifier: string): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') return false;
  // A package is named by its first part, or its first two when scoped: "@org/store/sub.js".
  const parts = specifier.split('/');
  const name = parts.slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  return [specifier, name].some((named) => error.message.includes(`'${named}'`));
}

/** The first line of why an import failed: never its stack. */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}

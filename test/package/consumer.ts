/**
 * A fresh project that installs the packed fencegate tarball the way a user would, from the local
 * npm cache only: the project's package-lock.json already names every version and integrity, so a
 * lockfile for the consumer is cut from it and `npm ci --offline` installs without a download.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const run = promisify(execFile);

interface LockEntry {
  version?: string;
  resolved?: string;
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

interface PackageJson {
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  exports: Record<string, unknown>;
  bin?: Record<string, string>;
}

export interface PackedFile {
  path: string;
  size: number;
}

export interface Packed {
  tarball: string;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

/** `npm pack` of the built tree into `dir`. */
export async function pack(dir: string): Promise<Packed> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [info] = JSON.parse(stdout) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: PackedFile[];
  }[];
  if (info === undefined) throw new Error('npm pack printed no package');
  return {
    tarball: join(dir, info.filename),
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files,
  };
}

export function projectPackage(): PackageJson {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
}

const lockPackages = (): Record<string, LockEntry> =>
  (
    JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;

/** Where node would find `name` from the package at `from` (a lockfile path). */
function resolveIn(lock: Record<string, LockEntry>, from: string, name: string): string | null {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (lock[candidate] !== undefined) return candidate;
    if (base === '') return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

/** Every lockfile entry the named top-level packages need, with their registry tarball URLs. */
function closure(lock: Record<string, LockEntry>, roots: string[]): Record<string, LockEntry> {
  const picked: Record<string, LockEntry> = {};
  const queue = roots.map((name) => `node_modules/${name}`);
  while (queue.length > 0) {
    const path = queue.pop() as string;
    const entry = lock[path];
    if (entry === undefined || picked[path] !== undefined) continue;
    const name =
      entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const file = name.split('/').pop() ?? name;
    picked[path] = {
      ...entry,
      dev: undefined,
      devOptional: undefined,
      resolved:
        entry.resolved ?? `https://registry.npmjs.org/${name}/-/${file}-${entry.version}.tgz`,
    };
    const required = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const [dep, _range] of Object.entries(entry.peerDependencies ?? {})) {
      if (entry.peerDependenciesMeta?.[dep]?.optional !== true) required[dep] = _range;
    }
    for (const dep of Object.keys(required)) {
      const found = resolveIn(lock, path, dep);
      if (found !== null) queue.push(found);
    }
  }
  return picked;
}

/**
 * Installs the tarball and `extra` (names of packages locked in this project, e.g. optional peers)
 * into `dir`. Install scripts do not run: better-sqlite3 would compile its addon, which nothing
 * here loads.
 */
export async function installConsumer(
  dir: string,
  tarball: string,
  extra: string[],
): Promise<void> {
  const lock = lockPackages();
  const own = projectPackage();
  const versions = Object.fromEntries(
    extra.map((name) => {
      const version = lock[`node_modules/${name}`]?.version;
      if (version === undefined) {
        throw new Error(
          `${name} is not in package-lock.json: add it to devDependencies so it installs offline`,
        );
      }
      return [name, version];
    }),
  );
  const dependencies = { fencegate: `file:${tarball}`, ...versions };
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', version: '1.0.0', dependencies },
    ...closure(lock, [...Object.keys(own.dependencies ?? {}), ...extra]),
    'node_modules/fencegate': {
      version: own.version,
      resolved: `file:${tarball}`,
      dependencies: own.dependencies ?? {},
      peerDependencies: own.peerDependencies ?? {},
      peerDependenciesMeta: own.peerDependenciesMeta ?? {},
      bin: own.bin ?? {},
    },
  };
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', type: 'module', dependencies }, null, 2),
  );
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify(
      { name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages },
      null,
      2,
    ),
  );
  await run(
    'npm',
    ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  );
}

/** Type-checks `files` in `dir` with this project's TypeScript, strictly, library types included. */
export async function typecheck(
  dir: string,
  files: string[],
  resolution: 'node16' | 'bundler',
): Promise<void> {
  const config = join(dir, `tsconfig.${resolution}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        target: 'es2022',
        module: resolution === 'node16' ? 'node16' : 'esnext',
        moduleResolution: resolution,
        types: ['node'],
      },
      files,
    }),
  );
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', config], {
    cwd: dir,
  });
}

/**
 * A fresh project that installs the packed fencegate tarball the way a user would, from the local
 * npm cache only: the project's package-lock.json already names every version and integrity, so a
 * lockfile for the consumer is cut from it and `npm ci --offline` installs without a download.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

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

/**
 * `npm pack` of the built tree into `dir`. `npm test` transpiles dist/'s JavaScript alone
 * (scripts/build-js.js); the declarations a user's type check reads are emitted here first, as
 * `npm run build` would (only .d.ts files are written: the JavaScript other tests run is left).
 */
export async function pack(dir: string): Promise<Packed> {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json', '--noCheck', '--emitDeclarationOnly'],
    {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
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

/**
 * A second project beside `from` (an installed consumer) that also has `peers`: `from`'s tree is
 * copied as hard links, so fencegate is a directory of its own there and finds its peers from it,
 * and each peer is linked from this project's node_modules, where the lockfile installed the same
 * versions. A second `npm ci` would only unpack the same packages again.
 */
export async function addPeers(from: string, to: string, peers: string[]): Promise<void> {
  await run('cp', ['-al', join(from, 'node_modules'), join(to, 'node_modules')]);
  copyFileSync(join(from, 'package.json'), join(to, 'package.json'));
  for (const peer of peers) {
    const link = join(to, 'node_modules', peer);
    if (existsSync(link)) continue;
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(realpathSync(join(ROOT, 'node_modules', peer)), link, 'dir');
  }
}

/**
 * Type-checks `files` in `dir` strictly with this project's TypeScript: the files and every
 * declaration file of the installed fencegate package, as `skipLibCheck: false` would. The other
 * packages' declarations are read but not checked, since an error in them is not the package's
 * (checking all of them cost four times the CPU). Throws with the diagnostics when there are any.
 */
export function typecheck(dir: string, files: string[], resolution: 'node16' | 'bundler'): void {
  const options: ts.CompilerOptions = {
    strict: true,
    skipLibCheck: false,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: resolution === 'node16' ? ts.ModuleKind.Node16 : ts.ModuleKind.ESNext,
    moduleResolution:
      resolution === 'node16' ? ts.ModuleResolutionKind.Node16 : ts.ModuleResolutionKind.Bundler,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  // Type libraries (`types`) are looked up from the current directory: the consumer's.
  host.getCurrentDirectory = () => dir;
  const program = ts.createProgram({
    rootNames: files.map((file) => join(dir, file)),
    options,
    host,
  });
  const checked = program
    .getSourceFiles()
    .filter(
      (file) =>
        !file.fileName.includes('/node_modules/') ||
        file.fileName.includes('/node_modules/fencegate/'),
    );
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((file) => [
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ]),
  ];
  if (checked.filter((file) => file.fileName.includes('/node_modules/fencegate/')).length === 0) {
    throw new Error(`the ${resolution} program in ${dir} holds no declaration file of fencegate`);
  }
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (name) => name,
        getCurrentDirectory: () => dir,
        getNewLine: () => '\n',
      }),
    );
  }
}

/**
 * The package as a user gets it: `npm pack` of the built tree, installed into a fresh project from
 * the local npm cache. That project has only what `npm install fencegate` brings (no optional
 * peers); a copy of it adds every peer, so each subpath of "exports" (read from package.json, the
 * integration subpaths included) imports and type-checks.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import {
  ROOT,
  addPeers,
  installConsumer,
  pack,
  projectPackage,
  run,
  typecheck,
  type Packed,
} from './consumer.js';

/** The entry points that need no optional peer (the store drivers included: they are peers). */
const CORE = [
  'fencegate',
  'fencegate/store',
  'fencegate/adapter',
  'fencegate/audit',
  'fencegate/dispatch',
  'fencegate/client',
  'fencegate/server',
  'fencegate/testing',
];
const manifest = projectPackage();
const everySubpath = Object.keys(manifest.exports).map((key) =>
  key === '.' ? 'fencegate' : `fencegate/${key.slice(2)}`,
);
const peers = Object.keys(manifest.peerDependencies ?? {});

const work = tempDir('fencegate-package-');
const bare = join(work.path, 'bare');
const full = join(work.path, 'full');
let packed: Packed;

beforeAll(async () => {
  packed = await pack(work.path);
  await run('mkdir', [bare, full]);
  await installConsumer(bare, packed.tarball, ['@types/node']);
  await addPeers(bare, full, peers);
}, 240_000);

afterAll(() => work.cleanup(), 120_000);

async function importAll(dir: string, specifiers: string[]): Promise<Record<string, string[]>> {
  const script = `
    const out = {};
    for (const s of ${JSON.stringify(specifiers)}) out[s] = Object.keys(await import(s));
    console.log(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    cwd: dir,
  });
  return JSON.parse(stdout) as Record<string, string[]>;
}

function writeTypeUse(dir: string, specifiers: string[]): string {
  const lines = specifiers.map((s, i) => `import * as m${i} from '${s}';`);
  lines.push(`export const modules = [${specifiers.map((_, i) => `m${i}`).join(', ')}];`);
  writeFileSync(join(dir, 'use.ts'), `${lines.join('\n')}\n`);
  return 'use.ts';
}

describe('the packed package', () => {
  it('holds the built library, its docs and bin, and no tests, sources or source maps', () => {
    const paths = packed.files.map((file) => file.path);
    expect(paths).toContain('bin/fencegate.js');
    expect(paths).toContain('dist/index.js');
    expect(paths).toContain('dist/index.d.ts');
    expect(paths).toContain('README.md');
    expect(paths.filter((path) => /\.map$|\.test\.|^test\/|^src\/|\.py[co]$/.test(path))).toEqual(
      [],
    );
    console.log(
      `fencegate package: ${packed.files.length} files, ${(packed.size / 1024).toFixed(1)} kB packed, ${(packed.unpackedSize / 1024).toFixed(1)} kB unpacked`,
    );
  });

  it("holds every file its README's links and images point at", () => {
    const paths = new Set(packed.files.map((file) => file.path));
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target));
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((target) => !paths.has(target))).toEqual([]);
  });

  it('imports fencegate, client, server and the framework-free test kit without any optional peer', async () => {
    const modules = await importAll(bare, CORE);
    expect(modules['fencegate']).toContain('Fencegate');
    expect(modules['fencegate/client']).toContain('FencegateClient');
    expect(modules['fencegate/server']).toContain('startServer');
    expect(modules['fencegate/testing']).toEqual(
      expect.arrayContaining(['ManualClock', 'PausePoints', 'faultyStore', 'runInterleaved']),
    );
    expect(modules['fencegate/testing']).not.toContain('defineStoreConformanceSuite');
  });

  it('names the driver a postgres:// or etcd:// URL needs when it is not installed', async () => {
    const script = `
      import { openStore, isFencegateError } from 'fencegate';
      for (const url of ['postgres://u:secret@127.0.0.1:1/db', 'etcd://127.0.0.1:1']) {
        await openStore(url).then(
          () => console.log('opened ' + url),
          (e) => console.log((isFencegateError(e) ? e.code : 'not a FencegateError') + ': ' + e.message),
        );
      }`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: bare,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(
      /^invalid_request: the postgres store needs the package pg.*npm install pg$/,
    );
    expect(lines[1]).toMatch(
      /^invalid_request: the etcd store needs the package (etcd3|@grpc\/grpc-js).*npm install etcd3 @grpc\/grpc-js$/,
    );
    expect(stdout).not.toContain('secret');
  });

  it('says which peer to install when a fast-check helper runs without it', async () => {
    const script = `
      import { ManualClock, PausePoints, exploreInterleavings } from 'fencegate/testing';
      const clock = new ManualClock(5); clock.advance(10);
      new PausePoints();
      await exploreInterleavings({ setup: async () => ({}), workers: () => ({}), check: () => {} })
        .then(() => console.log('ran'), (e) => console.log(clock.now() + ' ' + e.message));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: bare,
    });
    expect(stdout).toMatch(
      /^15 exploreInterleavings needs fast-check.*npm install --save-dev fast-check/,
    );
  });

  it('imports every subpath of "exports" once the optional peers are installed', async () => {
    const modules = await importAll(full, everySubpath);
    for (const specifier of everySubpath) expect(modules[specifier]?.length).toBeGreaterThan(0);
    expect(modules['fencegate/testing/vitest']).toContain('defineStoreConformanceSuite');
  });

  it('type-checks strictly with moduleResolution node16 and bundler, library types included', () => {
    const core = writeTypeUse(bare, CORE);
    // The peers' subpaths; the core ones are checked without peers.
    const withPeers = writeTypeUse(
      full,
      everySubpath.filter((specifier) => !CORE.includes(specifier)),
    );
    for (const resolution of ['node16', 'bundler'] as const) {
      typecheck(bare, [core], resolution);
      typecheck(full, [withPeers], resolution);
    }
  }, 120_000);

  it('runs `npx fencegate --help`', async () => {
    const { stdout } = await run('npx', ['--offline', 'fencegate', '--help'], { cwd: bare });
    expect(stdout).toContain('fencegate serve');
  }, 120_000);

  it('passes `npm publish --dry-run`', async () => {
    const { stdout, stderr } = await run('npm', ['publish', '--dry-run', '--offline'], {
      cwd: ROOT,
    });
    expect(`${stdout}${stderr}`).toContain(`+ fencegate@${manifest.version}`);
  }, 120_000);
});

/**
 * TypeScript entries of child processes, bundled once to JavaScript so that each child starts on
 * plain node: through tsx, each child loads the loader and transforms every source module again,
 * which costs more CPU than the child's own start. Packages stay imports (resolved from the
 * project's node_modules, `fencegate` through tsconfig's paths to the sources), and modules an
 * entry imports lazily stay lazy (split into chunks), so the children run as they would on tsx.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface BundledEntries {
  /** The bundle of each entry, by the entry's path: run it with `node <bundle>`. */
  bundleOf: (entry: string) => string;
  remove: () => void;
}

/** Bundles `entries` (paths to .ts files) beside the project, where their packages resolve. */
export async function bundledEntries(entries: string[]): Promise<BundledEntries> {
  const parent = join(ROOT, '.tmp');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'bundle-'));
  await build({
    entryPoints: entries,
    outdir: dir,
    entryNames: '[name]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'warning',
  });
  return {
    bundleOf: (entry) => join(dir, basename(entry).replace(/\.ts$/, '.mjs')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

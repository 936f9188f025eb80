/**
 * A TypeScript entry of a child process, bundled once to JavaScript so that the child starts on
 * plain node: through tsx, each child loads the loader and transforms every source module again,
 * which costs about twice the CPU of the child's own start. Packages stay imports (resolved from
 * the project's node_modules), so the child runs the same dependencies as the tests.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface BundledEntry {
  /** The bundle: run it with `node <path>`. */
  path: string;
  remove: () => void;
}

/** Bundles `entry` (a path to a .ts file) beside the project, where its packages resolve. */
export async function bundledEntry(entry: string): Promise<BundledEntry> {
  const parent = join(ROOT, '.tmp');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'bundle-'));
  const path = join(dir, basename(entry).replace(/\.ts$/, '.mjs'));
  await build({
    entryPoints: [entry],
    outfile: path,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

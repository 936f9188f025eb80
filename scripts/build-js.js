/**
 * `npm test`'s build: every file of src/ transpiled to dist/ on its own (esbuild), with source
 * maps and without declarations. The tests run dist/'s JavaScript (the `fencegate` processes they
 * start); types are checked by `npm run check`, and the package test emits the declarations
 * before it packs. The full build (`npm run build`, tsc) spends most of its ~19 s on the
 * declarations and on loading every peer's types; this takes about a second. Each file can be
 * transpiled alone because tsconfig.json sets `isolatedModules`, which the type check enforces.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { cleanDist } from './clean-dist.js';

/** The .ts files under `dir` (declarations excluded). */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'),
    )
    .map((entry) => join(entry.parentPath, entry.name));
}

/** `root`'s src/ into a fresh dist/: the output of a deleted source does not stay behind. */
export async function buildJs(root) {
  cleanDist(root);
  await build({
    absWorkingDir: root,
    entryPoints: sources(join(root, 'src')),
    outdir: join(root, 'dist'),
    outbase: join(root, 'src'),
    tsconfig: join(root, 'tsconfig.build.json'),
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildJs(dirname(dirname(fileURLToPath(import.meta.url))));
}

/**
 * Removes dist/ before a build: neither tsc nor esbuild deletes the output of a source file that
 * was deleted or renamed, and such a file would still be imported by a stale path or packed.
 * `node scripts/clean-dist.js` cleans this project's; `cleanDist(root)` another tree's.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function cleanDist(root) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cleanDist(dirname(dirname(fileURLToPath(import.meta.url))));
}

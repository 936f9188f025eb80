/**
 * `npm start`, `npm run demo` and `npm pack` build dist/ only when it is missing or older than
 * what it is built from (src/, the tsconfig files, package.json): a full build takes tens of
 * seconds, a demo a few. `node scripts/build-if-stale.js` builds when needed and says which.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
/**
 * Written by every build (tsc rewrites every output), so the older of the two is the last full
 * build's time. `npm test`'s transpile (scripts/build-js.js) writes the JavaScript alone: a dist/
 * it left with older declarations, or none, is built again before it is packed or run.
 */
const OUTPUTS = [join('dist', 'index.js'), join('dist', 'index.d.ts')];

/** Why `root`'s dist/ must be built again, or null when it is newer than all its inputs. */
export function staleReason(root) {
  let built = Infinity;
  for (const output of OUTPUTS) {
    const time = mtimeOf(join(root, output));
    if (time === null) return `${output} does not exist`;
    built = Math.min(built, time);
  }
  for (const input of INPUTS) {
    const newer = newerThan(join(root, input), built);
    if (newer !== null) return `${newer.slice(root.length + 1)} changed since the last build`;
  }
  return null;
}

function mtimeOf(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}

/** The first file at or under `path` modified after `time`, or null. */
function newerThan(path, time) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return null;
  }
  if (!stat.isDirectory()) return stat.mtimeMs > time ? path : null;
  // A deleted or renamed file changes its folder's time.
  if (stat.mtimeMs > time) return path;
  for (const entry of readdirSync(path)) {
    const found = newerThan(join(path, entry), time);
    if (found !== null) return found;
  }
  return null;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const reason = staleReason(root);
  if (reason === null) {
    process.stderr.write('fencegate: dist/ is up to date; not building\n');
  } else {
    process.stderr.write(`fencegate: building dist/ (${reason})\n`);
    const tsc = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    process.exitCode = tsc.status ?? 1;
  }
}

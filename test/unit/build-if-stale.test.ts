/**
 * `npm start`, `npm run demo` and `npm pack` build only when dist/ is missing or older than a
 * source, a tsconfig or package.json.
 */
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staleReason as check } from '../../scripts/build-if-stale.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: { cleanup: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir.cleanup()));

/** A project tree whose files all date from `at` (seconds since the epoch). */
function project(at: number): string {
  const dir = tempDir('fencegate-build-stale-');
  dirs.push(dir);
  const files = ['src/cli/main.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
  for (const file of files) {
    mkdirSync(join(dir.path, file, '..'), { recursive: true });
    writeFileSync(join(dir.path, file), '{}');
    utimesSync(join(dir.path, file), at, at);
  }
  for (const folder of ['src/cli', 'src']) utimesSync(join(dir.path, folder), at, at);
  return dir.path;
}

/** A full build (JavaScript and declarations) at `at`, or only the JavaScript. */
function build(root: string, at: number, files = ['dist/index.js', 'dist/index.d.ts']): void {
  mkdirSync(join(root, 'dist'), { recursive: true });
  for (const file of files) {
    writeFileSync(join(root, file), '');
    utimesSync(join(root, file), at, at);
  }
}

describe('building only what is stale', () => {
  it('builds a tree without dist/, and not again until an input changes', () => {
    const root = project(1_000);
    expect(check(root)).toBe('dist/index.js does not exist');
    build(root, 2_000);
    expect(check(root)).toBeNull();
    utimesSync(join(root, 'src/cli/main.ts'), 3_000, 3_000);
    expect(check(root)).toBe('src/cli/main.ts changed since the last build');
    build(root, 4_000);
    utimesSync(join(root, 'tsconfig.build.json'), 5_000, 5_000);
    expect(check(root)).toBe('tsconfig.build.json changed since the last build');
  });

  it("builds when dist/ has JavaScript newer than its declarations, as the tests' transpile leaves it", () => {
    const root = project(1_000);
    build(root, 2_000, ['dist/index.js']);
    expect(check(root)).toBe('dist/index.d.ts does not exist');
    build(root, 3_000);
    utimesSync(join(root, 'src/cli/main.ts'), 4_000, 4_000);
    build(root, 5_000, ['dist/index.js']);
    expect(check(root)).toBe('src/cli/main.ts changed since the last build');
  });

  it('builds again when a source file is deleted', () => {
    const root = project(1_000);
    build(root, 2_000);
    rmSync(join(root, 'src/cli/main.ts'));
    expect(check(root)).toBe('src/cli changed since the last build');
  });
});

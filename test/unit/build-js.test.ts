/**
 * `npm test`'s transpile (scripts/build-js.js) writes a fresh dist/: the output of a source that
 * was deleted does not stay behind to be imported by a stale path or packed.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildJs } from '../../scripts/build-js.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: { cleanup: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => dir.cleanup()));

describe("the tests' transpile of src/", () => {
  it('writes each source to dist/ and leaves nothing of a deleted one', async () => {
    const dir = tempDir('fencegate-build-js-');
    dirs.push(dir);
    const root = dir.path;
    mkdirSync(join(root, 'src', 'store'), { recursive: true });
    writeFileSync(
      join(root, 'tsconfig.build.json'),
      '{ "compilerOptions": { "target": "ES2022" } }',
    );
    writeFileSync(join(root, 'src', 'index.ts'), 'export const kept: number = 1;\n');
    writeFileSync(join(root, 'src', 'store', 'gone.ts'), "export const gone: string = 'x';\n");
    await buildJs(root);
    expect(existsSync(join(root, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(root, 'dist', 'store', 'gone.js'))).toBe(true);

    rmSync(join(root, 'src', 'store', 'gone.ts'));
    // A declaration of an earlier full build, for the deleted source.
    writeFileSync(join(root, 'dist', 'store', 'gone.d.ts'), 'export declare const gone: string;\n');
    await buildJs(root);
    expect(existsSync(join(root, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(root, 'dist', 'store', 'gone.js'))).toBe(false);
    expect(existsSync(join(root, 'dist', 'store', 'gone.d.ts'))).toBe(false);
  });
});

import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  chooseTempRoot,
  freeBytes,
  MIN_FREE_BYTES,
  RUN_DIR_MODE,
  TEST_TMPDIR_ENV,
  useTestTempDir,
} from './test-temp-root.js';
import { tempDir } from './temp-dir.js';

describe("the test run's temporary directory", () => {
  it('is in memory when the memory file system has room', () => {
    const choice = chooseTempRoot({}, '/mem', () => MIN_FREE_BYTES);
    expect(choice).toEqual({ root: '/mem', why: 'in memory' });
  });

  it('stays on the system temporary directory when memory is short or missing', () => {
    const short = chooseTempRoot({}, '/mem', () => 64 * 1024 ** 2);
    expect(short.root).toBe(tmpdir());
    expect(short.why).toBe('/mem has 64 MiB free, under 2 GiB');
    const none = chooseTempRoot({}, '/mem', () => null);
    expect(none).toEqual({ root: tmpdir(), why: 'no writable /mem' });
  });

  it('follows FENCEGATE_TEST_TMPDIR; empty keeps the system temporary directory', () => {
    const free = (): number => MIN_FREE_BYTES * 10;
    expect(chooseTempRoot({ [TEST_TMPDIR_ENV]: '/fast' }, '/mem', free).root).toBe('/fast');
    expect(chooseTempRoot({ [TEST_TMPDIR_ENV]: '' }, '/mem', free).root).toBe(tmpdir());
  });

  it('answers no room for a path that is missing or a file', () => {
    const dir = tempDir('fencegate-temp-root-');
    try {
      expect(freeBytes(dir.path)).toBeGreaterThan(0);
      expect(freeBytes(`${dir.path}/missing`)).toBeNull();
    } finally {
      dir.cleanup();
    }
  });

  it('points TMPDIR at a fresh directory, then puts it back and removes the directory', () => {
    const root = tempDir('fencegate-temp-root-');
    const env: NodeJS.ProcessEnv = { [TEST_TMPDIR_ENV]: root.path, TMPDIR: '/before' };
    try {
      const made = useTestTempDir(env);
      expect(made.path.startsWith(`${root.path}/fencegate-tests-`)).toBe(true);
      expect(env.TMPDIR).toBe(made.path);
      expect(existsSync(made.path)).toBe(true);
      // Another user (the throwaway cluster's postgres) can pass through it, not list it.
      expect(statSync(made.path).mode & 0o777).toBe(RUN_DIR_MODE);
      made.remove();
      expect(env.TMPDIR).toBe('/before');
      expect(existsSync(made.path)).toBe(false);
    } finally {
      root.cleanup();
    }
  });
});

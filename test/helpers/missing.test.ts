import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSkippedGroups, skipOrRefuse, skipSummary, strictAboutMissing } from './missing.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('fencegate-missing-');
afterAll(() => dir.cleanup());

const etcd = { group: 'etcd store', missing: 'etcd not on PATH', install: 'apt-get install etcd' };

describe('groups skipped for something missing', () => {
  it('runs a group whose dependency is present, recording nothing', () => {
    const file = join(dir.path, 'present.jsonl');
    expect(skipOrRefuse({ ...etcd, missing: null }, {}, file)).toBe(false);
    expect(skipOrRefuse({ ...etcd, missing: null }, { CI: 'true' }, file)).toBe(false);
    expect(readSkippedGroups(file)).toEqual([]);
  });

  it('skips a group on a developer machine and prints one line per group, once', () => {
    const file = join(dir.path, 'skipped.jsonl');
    expect(skipOrRefuse(etcd, {}, file)).toBe(true);
    expect(skipOrRefuse(etcd, {}, file)).toBe(true);
    const chromium = {
      group: 'dashboard',
      missing: 'no chromium',
      install: 'apt-get install chromium',
    };
    expect(skipOrRefuse(chromium, {}, file)).toBe(true);
    const lines = skipSummary(readSkippedGroups(file));
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe('  skipped: etcd store: etcd not on PATH; install: apt-get install etcd');
    expect(lines[2]).toContain('dashboard: no chromium; install: apt-get install chromium');
  });

  it('refuses to skip under CI=true or FENCEGATE_TEST_STRICT=1, naming what to install', () => {
    const file = join(dir.path, 'strict.jsonl');
    expect(() => skipOrRefuse(etcd, { CI: 'true' }, file)).toThrow(
      /etcd store cannot run: etcd not on PATH\. Install it with: apt-get install etcd/,
    );
    expect(() => skipOrRefuse(etcd, { FENCEGATE_TEST_STRICT: '1' }, file)).toThrow(
      /apt-get install etcd/,
    );
    expect(readSkippedGroups(file)).toEqual([]);
    expect(strictAboutMissing({ CI: 'false' })).toBe(false);
  });

  it('prints nothing when nothing was skipped', () => {
    expect(skipSummary([])).toEqual([]);
  });
});

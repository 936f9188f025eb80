/** `fencegate demo` and `fencegate verify` on etcd, as a user runs them (serve: the HTTP suite). */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runCli } from '../e2e/cli-process.js';
import { etcdTestUrl, skipWithoutEtcd } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

describe.skipIf(noEtcd)('the CLI on etcd', () => {
  it(
    'runs the demo on a 3-member cluster and verifies the history it left',
    { timeout: 120_000 },
    async () => {
      const store = `${etcdTestUrl('cluster')}?prefix=cli-${randomUUID().slice(0, 8)}`;
      const demo = await runCli([
        'demo',
        '--store',
        store,
        '--workflows',
        '1000',
        '--jobs',
        '600',
        '--json',
      ]);
      expect(demo.stderr).not.toMatch(/error|fail/i);
      expect(demo.code).toBe(0);
      const report = JSON.parse(demo.stdout) as { report: { staleAccepted: number } };
      expect(report.report.staleAccepted).toBe(0);
      const verify = await runCli(['verify', '--store', store, '--json']);
      expect(verify.code).toBe(0);
      const result = JSON.parse(verify.stdout) as { ok: boolean; checked: number };
      expect(result.ok).toBe(true);
      expect(result.checked).toBeGreaterThan(1000);
    },
  );
});

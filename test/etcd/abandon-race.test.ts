/**
 * abandonOperation against a commit of the same operationId on etcd, from two clients on one key
 * prefix, both sent at once in either order, with and without group commit: whichever Txn etcd
 * applies first decides, and abandon's answer, the commit's answer and the store agree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStore } from '../../src/audit/verify.js';
import { Fencegate } from '../../src/gate.js';
import { EtcdStore } from '../../src/store/etcd/etcd-store.js';
import type { CommitResult, Grant } from '../../src/types.js';
import { expectAgreement } from '../helpers/abandon-agreement.js';
import { etcdTestUrl, skipWithoutEtcd, uniquePrefix } from '../helpers/stores/etcd.js';

/** The whole file is skipped, and reported, on a machine without etcd. */
const noEtcd = skipWithoutEtcd();

const ROUNDS = 12;

const TITLE = 'abandon and commit racing on etcd (group commit %s)';

describe.skipIf(noEtcd).each([false, true])(TITLE, (batched) => {
  const url = noEtcd ? '' : `${etcdTestUrl('single')}?prefix=${uniquePrefix('abandon-race')}`;
  let committer: Fencegate;
  let abandoner: Fencegate;
  let grant: Grant;

  beforeAll(async () => {
    committer = await Fencegate.open({
      store: await EtcdStore.open({ url, groupCommit: batched }),
    });
    abandoner = await Fencegate.open({ store: await EtcdStore.open({ url }) });
    grant = await committer.acquire({ scope: 'race', holder: 'w', ttlMs: 3_600_000 });
  });

  afterAll(async () => {
    const report = await verifyStore(committer.store);
    await committer.close();
    await abandoner.close();
    expect(report.violations).toEqual([]);
  });

  const commit = (operationId: string): Promise<CommitResult> =>
    committer.commit({
      scope: 'race',
      fence: grant.fence,
      operationId,
      writes: [{ name: operationId, expectRevision: 0, value: operationId }],
    });

  it('in every order the answers agree with the store', async () => {
    const abandonedFirst = await abandoner.abandonOperation('a', {});
    expect(await expectAgreement(committer, 'race', 'a', abandonedFirst, await commit('a'))).toBe(
      'abandoned',
    );
    const committedFirst = await commit('b');
    expect(
      await expectAgreement(
        committer,
        'race',
        'b',
        await abandoner.abandonOperation('b', {}),
        committedFirst,
      ),
    ).toBe('committed');
    for (let round = 0; round < ROUNDS; round++) {
      const operationId = `both-${round}`;
      const [committed, abandoned] =
        round % 2 === 0
          ? await Promise.all([commit(operationId), abandoner.abandonOperation(operationId, {})])
          : await Promise.all([
              abandoner.abandonOperation(operationId, {}),
              commit(operationId),
            ]).then(([a, c]) => [c, a] as const);
      await expectAgreement(committer, 'race', operationId, abandoned, committed);
    }
  });
});

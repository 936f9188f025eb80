/**
 * abandonOperation against a commit on SQLite, from two processes sharing one file: this one
 * commits, a peer process abandons (and holds the write lock when a case needs both in flight). In
 * every order, abandon's answer and the store agree.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fencegate } from '../../src/gate.js';
import type { CommitResult, Grant } from '../../src/types.js';
import { expectAgreement } from '../helpers/abandon-agreement.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startPeer, type Peer } from './peer-process.js';

const dir = tempDir();
const path = join(dir.path, 'shared.db');
let gate: Fencegate;
let grant: Grant;
let peer: Peer;

beforeAll(async () => {
  gate = await Fencegate.open({ store: `sqlite:${path}` });
  grant = await gate.acquire({ scope: 'race', holder: 'w', ttlMs: 3_600_000 });
  peer = startPeer(path);
});

afterAll(async () => {
  await peer.stop();
  await gate.close();
  dir.cleanup();
});

function commit(operationId: string): Promise<CommitResult> {
  return gate.commit({
    scope: 'race',
    fence: grant.fence,
    operationId,
    writes: [{ name: operationId, expectRevision: 0, value: operationId }],
  });
}

async function abandon(operationId: string): Promise<CommitResult> {
  const { result } = await peer.send(`abandon ${operationId}`);
  if (result === undefined) throw new Error('the peer answered no outcome');
  return result;
}

describe('abandonOperation and a commit from two processes on one SQLite file', () => {
  it('the commit first: abandon answers it', async () => {
    const committed = await commit('first-commit');
    const abandoned = await abandon('first-commit');
    expect(await expectAgreement(gate, 'race', 'first-commit', abandoned, committed)).toBe(
      'committed',
    );
  });

  it('the abandon first: the commit is answered the abandonment and never applies', async () => {
    const abandoned = await abandon('first-abandon');
    const committed = await commit('first-abandon');
    expect(await expectAgreement(gate, 'race', 'first-abandon', abandoned, committed)).toBe(
      'abandoned',
    );
  });

  it('both waiting for the write lock, in either order: the answers agree with the store', async () => {
    for (let round = 0; round < 6; round++) {
      const operationId = `behind-lock-${round}`;
      await peer.send('lock');
      let committing: Promise<CommitResult>;
      let abandoning: Promise<CommitResult>;
      if (round % 2 === 0) {
        committing = commit(operationId);
        abandoning = abandon(operationId);
      } else {
        abandoning = abandon(operationId);
        committing = commit(operationId);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      await peer.send('unlock');
      const [committed, abandoned] = await Promise.all([committing, abandoning]);
      await expectAgreement(gate, 'race', operationId, abandoned, committed);
    }
  });
});

/**
 * Two processes appending to one session at once, on one SQLite file: each claims the session, the
 * later claim supersedes the earlier, and every item either process was told was stored is in the
 * history, once, in its process's order; every refused one is absent. (The SDK's MemorySession
 * keeps a history per process, so two processes never share one; its failures under a shared
 * history are measured in process, in openai-agents-session-contract.test.ts and
 * openai-agents-run.test.ts.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledEntries, type BundledEntries } from '../helpers/bundled-entry.js';
import { Fencegate } from '../../src/gate.js';
import { FencedSession } from '../../src/integrations/openai-agents/index.js';
import { lines } from './openai-agents-fixture.js';

const CHILD = new URL('./openai-agents-session-child.ts', import.meta.url).pathname;
/** The child, bundled once for the file: each start is then plain node instead of tsx. */
let childBundle: BundledEntries | undefined;
beforeAll(async () => {
  childBundle = await bundledEntries([CHILD]);
});
afterAll(() => childBundle?.remove());
const ITEMS = 25;

interface Outcome {
  accepted: string[];
  refused: string | null;
  history: string[];
}

interface Child {
  go(): void;
  outcome(): Promise<Outcome>;
}

/** Starts a child and waits until it has opened its session. */
async function startChild(options: Record<string, unknown>): Promise<Child> {
  const child = spawn(process.execPath, [childBundle!.bundleOf(CHILD), JSON.stringify(options)]);
  const lineReader = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => String((await lineReader.next()).value);
  expect(await next()).toBe('open');
  return {
    go: () => child.stdin.write('go\n'),
    outcome: async () => JSON.parse(await next()) as Outcome,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'fencegate-sessions-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('one session, two processes appending at once', () => {
  it('FencedSession: every accepted item is stored once, in order; no refused one is', async () => {
    const store = `sqlite:${join(dir, 'sessions.db')}`;
    const sessionId = 'shared-conversation';
    const first = await startChild({ store, sessionId, run: 'first', items: ITEMS });
    const second = await startChild({ store, sessionId, run: 'second', items: ITEMS });
    first.go();
    second.go();
    const outcomes = await Promise.all([first.outcome(), second.outcome()]);

    const gate = await Fencegate.open({ store });
    const reader = await FencedSession.claim(gate, {
      sessionId,
      holder: 'reader',
      whenBusy: 'takeOver',
    });
    const history = lines(await reader.getItems()).map((line) => line.replace(/^user: /, ''));
    for (const outcome of outcomes) {
      expect(history.filter((text) => outcome.accepted.includes(text))).toEqual(outcome.accepted);
    }
    const refused = outcomes.flatMap((outcome, run) =>
      Array.from(
        { length: ITEMS },
        (_, index) => `${run === 0 ? 'first' : 'second'} item ${index}`,
      ).filter((text) => !outcome.accepted.includes(text)),
    );
    expect(history.filter((text) => refused.includes(text))).toEqual([]);
    expect(history).toHaveLength(outcomes[0].accepted.length + outcomes[1].accepted.length);
    // The second claim superseded the first: the first's refusals name a moved fence.
    expect(outcomes.map((outcome) => outcome.refused).filter((code) => code !== null)).toEqual(
      outcomes.some((outcome) => outcome.accepted.length < ITEMS) ? ['stale_fence'] : [],
    );
    await reader.release();
    expect((await gate.verify()).violations).toEqual([]);
    await gate.close();
  }, 60_000);
});

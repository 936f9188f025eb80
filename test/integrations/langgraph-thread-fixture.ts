/**
 * What the in-process runThread tests share: per test a fresh gate on the in-memory reference store and
 * a saver that reads the threads (its own holder, `reader`), verified and closed after the test.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import type { Fencegate } from '../../src/gate.js';
import { FencedCheckpointSaver } from '../../src/integrations/langgraph/index.js';
import { memoryGate } from '../helpers/memory-store.js';

export interface ThreadFixture {
  gate: Fencegate;
  saver: FencedCheckpointSaver;
}

/** Registers the fixture's hooks (call inside a describe); the object holds the current test's. */
export function useThreadFixture(): ThreadFixture {
  const fixture = {} as ThreadFixture;
  beforeEach(async () => {
    fixture.gate = await memoryGate();
    fixture.saver = new FencedCheckpointSaver({ gate: fixture.gate, holder: 'reader' });
  });
  afterEach(async () => {
    expect((await fixture.gate.verify()).violations).toEqual([]);
    await fixture.saver.close();
    await fixture.gate.close();
  });
  return fixture;
}

/** Matches the holder of a run of runThread given `holder: worker`: `<worker>/<runId>`. */
export function runHolder(worker: string): unknown {
  return expect.stringMatching(new RegExp(`^${worker}/[0-9a-f-]{36}$`)) as unknown;
}

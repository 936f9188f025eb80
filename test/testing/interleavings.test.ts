import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exploreInterleavings, runInterleaved } from '../../src/testing/index.js';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('runInterleaved', () => {
  it('keeps each worker in order and runs every step alone, also across macrotasks', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (scheduler) => {
        const log: string[] = [];
        const step = (name: string) => async () => {
          log.push(`${name}:start`);
          await tick();
          await Promise.resolve();
          await tick();
          log.push(`${name}:end`);
        };
        const trace = await runInterleaved(scheduler, {
          A: [step('a1'), step('a2'), step('a3')],
          B: [step('b1'), { label: 'named', run: step('b2') }],
        });
        for (let i = 0; i < log.length; i += 2) {
          expect(log[i]?.replace(':start', '')).toBe(log[i + 1]?.replace(':end', ''));
        }
        const starts = log.filter((entry) => entry.endsWith(':start'));
        expect(starts.filter((entry) => entry.startsWith('a'))).toEqual([
          'a1:start',
          'a2:start',
          'a3:start',
        ]);
        expect(starts.filter((entry) => entry.startsWith('b'))).toEqual(['b1:start', 'b2:start']);
        expect(trace.order).toHaveLength(5);
        expect(trace.order).toContain('B:named');
      }),
      { numRuns: 30 },
    );
  });

  it('fails the run when a step throws, naming the step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (scheduler) => {
        const run = runInterleaved(scheduler, {
          A: [
            () => Promise.resolve(),
            { label: 'boom', run: () => Promise.reject(new Error('boom')) },
          ],
          B: [() => Promise.resolve()],
        });
        await expect(run).rejects.toThrow('step A:boom failed');
      }),
      { numRuns: 5 },
    );
  });
});

describe('exploreInterleavings', () => {
  it('meets every order of two one-step workers', async () => {
    const seen = new Set<string>();
    await exploreInterleavings(
      {
        setup: () => Promise.resolve({ log: [] as string[] }),
        workers: (ctx) => ({
          A: [() => Promise.resolve(ctx.log.push('A'))],
          B: [() => Promise.resolve(ctx.log.push('B'))],
        }),
        check: (ctx, trace) => {
          expect(trace.order.map((step) => step.split(':')[0])).toEqual(ctx.log);
          seen.add(ctx.log.join(''));
        },
      },
      { numRuns: 60 },
    );
    expect([...seen].sort()).toEqual(['AB', 'BA']);
  });

  it('reports a failing check with the seed that replays it, and tears down every run', async () => {
    let teardowns = 0;
    let setups = 0;
    const scenario = {
      setup: () => {
        setups += 1;
        return Promise.resolve({ log: [] as string[] });
      },
      workers: (ctx: { log: string[] }) => ({
        A: [() => Promise.resolve(ctx.log.push('A'))],
        B: [() => Promise.resolve(ctx.log.push('B'))],
      }),
      check: (ctx: { log: string[] }) => {
        if (ctx.log[0] === 'B') throw new Error('B went first');
      },
      teardown: () => {
        teardowns += 1;
        return Promise.resolve();
      },
    };
    const failure = await exploreInterleavings(scenario, { numRuns: 60 }).catch(
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/seed/);
    expect(String(failure)).toMatch(/B went first/);
    expect(teardowns).toBe(setups);
  });
});

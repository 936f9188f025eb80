/**
 * The dashboard's charts as rendered, without a server: every text in them (rejection codes,
 * rollout ids, policy versions, gate names) is escaped, nothing carries an inline style, a quiet
 * window draws no wall of zeros, a step under way is drawn as far as its cutover moved, and a
 * gate's metric is drawn against its limit.
 */
import { describe, expect, it } from 'vitest';
import type { ActivityView } from '../../src/server/ui/activity.js';
import { toHtmlString } from '../../src/server/ui/html.js';
import { activityPanel } from '../../src/server/ui/panels/activity.js';
import { gateCharts, rolloutCard } from '../../src/server/ui/panels/rollouts.js';
import { rolloutTimeline } from '../../src/server/ui/rollout-timeline.js';
import type { RolloutGateReading, RolloutReport } from '../../src/types.js';

const HOSTILE = '"><img src=x onerror=alert(1)>';
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const noJobs = { total: 0, byState: {} as RolloutReport['toPolicyJobs']['byState'] };

function quietWindow(rejected: Record<string, number>): ActivityView {
  return {
    minutes: Array.from({ length: 10 }, (_, i) => ({
      minute: T0 - i * 60_000,
      committed: i === 3 ? 4 : 0,
      rejected: i === 3 ? rejected : {},
    })),
    reasons: Object.keys(rejected).sort(),
    caughtUp: true,
  };
}

function report(fields: Partial<RolloutReport> = {}): RolloutReport {
  return {
    rollout: {
      rolloutId: 'r1',
      fromPolicy: 'v7',
      toPolicy: 'v8',
      selection: { prefix: 'wf-' },
      steps: [10, 50],
      controller: null,
      status: 'running',
      step: 2,
      percent: 50,
      revision: 2,
      cancelIntents: false,
      reason: null,
      startedAt: T0,
      updatedAt: T0 + 60_000,
      holdSeconds: null,
      holdExtensionSeconds: null,
      gates: [],
      onFailure: 'rollback',
      gateResults: [],
      cutoverId: 'r1/step-2',
      cutoverDone: false,
    },
    steps: [
      {
        cutoverId: 'r1/step-1',
        percent: 10,
        status: 'completed',
        moved: 10,
        skipped: 0,
        commitsAccepted: 0,
        pinnedAtAcquire: 0,
        unknownOutcomes: 0,
        toPolicyJobs: noJobs,
        startedAt: T0,
        completedAt: T0 + 1000,
      },
      {
        cutoverId: 'r1/step-2',
        percent: 50,
        status: 'running',
        moved: 20,
        skipped: 0,
        commitsAccepted: 0,
        pinnedAtAcquire: 0,
        unknownOutcomes: 0,
        toPolicyJobs: noJobs,
        startedAt: T0 + 60_000,
        completedAt: null,
      },
    ],
    pinnedAtAcquire: 0,
    rollback: null,
    unknownOutcomes: 0,
    toPolicyJobs: noJobs,
    gateSeries: [],
    ...fields,
  };
}

describe('the dashboard charts', () => {
  it('shows a rejection code as text in the chart, the legend and the table, with no inline style', () => {
    const out = toHtmlString(activityPanel(quietWindow({ [HOSTILE]: 2 })));
    expect(out).not.toContain('<img');
    expect(out).not.toContain('style=');
    expect(out).toContain('data-series="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
    expect(out).toContain('rejected: &quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    // One minute had commits: one table row; six commits in it make an axis of 0, 5 and 10.
    expect(out.match(/<tr>/g)).toHaveLength(2);
    expect(
      [...out.matchAll(/text-anchor="end"\s+fill="#6b7480"\s*>\s*(\d+)\s*</g)].map((m) => m[1]),
    ).toEqual(['0', '5', '10']);
  });

  it('says so when the window is quiet, rather than listing zeros', () => {
    const quiet: ActivityView = { ...quietWindow({}), minutes: quietWindow({}).minutes.slice(4) };
    const out = toHtmlString(activityPanel(quiet));
    expect(out).toContain('no commits in the last 6 minutes');
    expect(out).not.toContain('<table');
    expect(out).not.toContain('<rect x=');
  });

  it('draws a step under way as far as its cutover moved, and a gate against its limit', () => {
    const now = T0 + 120_000;
    const shown = report({
      rollout: { ...report().rollout, rolloutId: 'r1', toPolicy: 'v8', reason: HOSTILE },
    });
    // Step 2 lists 80 scopes and moved 20: a quarter of the way from 10 % to 50 %.
    const timeline = rolloutTimeline(shown, now, (id) => (id === 'r1/step-2' ? 80 : undefined));
    expect(timeline.points.map((p) => [p.at - T0, p.percent])).toEqual([
      [0, 0],
      [0, 0],
      [1000, 10],
      [60_000, 10],
      [120_000, 20],
      [120_000, 20],
    ]);
    expect(timeline.events.map((e) => e.label)).toEqual([
      'start',
      'step 1 · 10 %',
      'step 2 · 50 %',
    ]);
    const out = toHtmlString(
      rolloutCard(shown, timeline, [
        {
          name: HOSTILE,
          fixedLimit: 0.05,
          points: [
            { at: T0, value: 0.01, limit: 0.05, over: false },
            { at: T0 + 90_000, value: 0.08, limit: 0.05, over: true },
          ],
          last: {
            verdict: 'fail',
            value: 0.08,
            baseline: null,
            samples: 1,
            baselineSamples: 0,
            limit: 0.05,
            pValue: null,
            at: T0 + 90_000,
          },
        },
      ]),
    );
    expect(out).not.toContain('<img');
    expect(out).not.toContain('style=');
    expect(out).toContain('data-gate="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');
    expect(out).toContain('limit 0.05');
    // Over its limit: the gate is marked.
    expect(out).toMatch(/<b class="bad">\s*&quot;&gt;&lt;img/);
    expect(out).not.toContain('no gates');
  });

  it("draws each gate's readings of the step against its limit: max, maxRatio × baseline, or the baseline", () => {
    const reading = (
      at: number,
      value: number | null,
      fields: Partial<RolloutGateReading> = {},
    ) => ({
      verdict: 'pending' as const,
      value,
      baseline: 0.02,
      samples: 9,
      baselineSamples: 40,
      limit: null,
      pValue: null,
      at: T0 + at,
      ...fields,
    });
    const rollout = {
      ...report().rollout,
      gates: [
        { name: 'abs', metric: 'job_failure_ratio' as const, minSamples: 5, max: 0.1 },
        { name: 'ratio', metric: 'job_failure_ratio' as const, minSamples: 5, maxRatio: 2 },
        { name: 'sig', metric: 'job_failure_ratio' as const, minSamples: 5, confidence: 0.95 },
        { name: 'unread', metric: 'rejection_ratio' as const, minSamples: 5, max: 0.2 },
      ],
    };
    const shown = report({
      rollout,
      gateSeries: [
        {
          name: 'abs',
          readings: [
            reading(1000, null, { samples: 0 }),
            reading(2000, 0.05, { limit: 0.1 }),
            reading(3000, 0.3, { limit: 0.1, verdict: 'fail' }),
          ],
        },
        { name: 'ratio', readings: [reading(1000, 0.03), reading(2000, 0.05)] },
        { name: 'sig', readings: [reading(1000, 0.3), reading(2000, 0.3, { verdict: 'fail' })] },
        { name: 'unread', readings: [] },
      ],
    });
    const charts = gateCharts(shown);
    const drawn = (name: string) =>
      charts.find((chart) => chart.name === name)!.points.map((p) => [p.at - T0, p.limit, p.over]);
    // A reading without a value is not a point; 0.3 is over the max of 0.1.
    expect(drawn('abs')).toEqual([
      [2000, 0.1, false],
      [3000, 0.1, true],
    ]);
    // 2 × the baseline of 0.02: 0.05 is over it before the gate decides.
    expect(drawn('ratio')).toEqual([
      [1000, 0.04, false],
      [2000, 0.04, true],
    ]);
    // A significance test's line is the baseline; it is red only where the test failed.
    expect(drawn('sig')).toEqual([
      [1000, 0.02, false],
      [2000, 0.02, true],
    ]);
    expect(charts.map((chart) => [chart.name, chart.fixedLimit, chart.last?.at ?? null])).toEqual([
      ['abs', 0.1, T0 + 3000],
      ['ratio', null, T0 + 2000],
      ['sig', null, T0 + 2000],
      ['unread', 0.2, null],
    ]);
    const out = toHtmlString(
      rolloutCard(
        shown,
        rolloutTimeline(shown, T0 + 60_000, () => undefined),
        charts,
      ),
    );
    const gate = (name: string) =>
      out.slice(out.indexOf(`data-gate="${name}"`)).split('</div>')[0]!;
    expect(gate('abs').match(/<circle/g)).toHaveLength(2);
    expect(gate('abs').match(/data-reading="over"[^>]*fill="#b3261e"/g)).toHaveLength(1);
    expect(gate('abs')).toContain('data-limit="0.1"');
    expect(gate('abs')).toContain('fail: 0.3 / limit 0.1, 9 samples');
    expect(gate('unread')).not.toContain('<circle');
    expect(gate('unread')).toContain('data-limit="0.2"');
    expect(gate('unread')).toContain('not read yet');
    expect(out).not.toContain('style=');
  });
});

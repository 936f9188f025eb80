/** The wire shapes of a rollout's holds, gates and gate readings (core/validate-rollout-gates.ts). */
import { Type } from '@sinclair/typebox';
import { GATE_SERIES_READINGS } from '../../core/gate-series.js';
import { MAX_GATES, MAX_HOLD_SECONDS, MAX_MIN_SAMPLES } from '../../core/validate-rollout-gates.js';
import { COMMIT_REJECTION_CODES } from '../../errors.js';
import { ROLLOUT_GATE_METRICS } from '../../types.js';
import { CLOSED, Counter, Millis, Name, Nullable } from './common.js';

const HoldSeconds = Type.Integer({ minimum: 0, maximum: MAX_HOLD_SECONDS });

export const RolloutGateSchema = Type.Object(
  {
    name: Name,
    metric: Type.Union(ROLLOUT_GATE_METRICS.map((metric) => Type.Literal(metric))),
    code: Type.Optional(Type.Union(COMMIT_REJECTION_CODES.map((code) => Type.Literal(code)))),
    source: Type.Optional(Name),
    minSamples: Type.Integer({ minimum: 1, maximum: MAX_MIN_SAMPLES }),
    max: Type.Optional(Type.Number({ description: 'the absolute maximum of the metric' })),
    maxRatio: Type.Optional(
      Type.Number({ description: 'the most the metric may be, as a multiple of the baseline' }),
    ),
    confidence: Type.Optional(
      Type.Number({
        description: 'fails when worse than the baseline at this confidence, e.g. 0.95',
      }),
    ),
  },
  CLOSED,
);

const FailureAction = Type.Union([Type.Literal('rollback'), Type.Literal('pause')]);

/** The optional fields of a rollout's start. */
export const rolloutHoldBody = {
  holdSeconds: Type.Optional(
    Type.Union([HoldSeconds, Type.Array(HoldSeconds, { minItems: 1, maxItems: 20 })], {
      description: 'seconds each step is held before the driver advances: one, or one per step',
    }),
  ),
  holdExtensionSeconds: Type.Optional(HoldSeconds),
  gates: Type.Optional(Type.Array(RolloutGateSchema, { maxItems: MAX_GATES })),
  onFailure: Type.Optional(FailureAction),
};

const GateResultSchema = Type.Object(
  {
    name: Name,
    verdict: Type.Union([Type.Literal('pass'), Type.Literal('fail'), Type.Literal('pending')]),
    value: Nullable(Type.Number()),
    baseline: Nullable(Type.Number()),
    samples: Counter,
    baselineSamples: Counter,
    limit: Nullable(Type.Number()),
    pValue: Nullable(Type.Number()),
    at: Millis,
  },
  CLOSED,
);

const { name: _name, ...readingFields } = GateResultSchema.properties;

/** Each gate's readings of the current step, as a rollout's report answers them. */
export const GateSeriesSchema = Type.Object(
  {
    name: Name,
    readings: Type.Array(Type.Object(readingFields, CLOSED), { maxItems: GATE_SERIES_READINGS }),
  },
  CLOSED,
);

/** The same fields as a rollout answers them. */
export const rolloutHoldAnswer = {
  holdSeconds: Nullable(Type.Array(HoldSeconds)),
  holdExtensionSeconds: Nullable(HoldSeconds),
  gates: Type.Array(RolloutGateSchema),
  onFailure: FailureAction,
  gateResults: Type.Array(GateResultSchema),
};

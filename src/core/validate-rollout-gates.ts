/**
 * Validation of a rollout's holds, gates and failure action (docs/rollout.md, "Holds and gates").
 * Every message says what to send instead; nothing is stored until all of it is valid.
 */
import { COMMIT_REJECTION_CODES, fail } from '../errors.js';
import {
  ROLLOUT_GATE_METRICS,
  type RolloutFailureAction,
  type RolloutGate,
  type RolloutGateMetric,
} from '../types.js';
import { requireInteger, requireName, requireObject } from './validate.js';

/** A week: a longer hold is a rollout an operator should advance by hand. */
export const MAX_HOLD_SECONDS = 7 * 24 * 3600;
export const MAX_GATES = 10;
export const MAX_MIN_SAMPLES = 1_000_000;
const MAX_RATIO = 1000;
const MIN_CONFIDENCE = 0.5;
const MAX_CONFIDENCE = 0.9999;
const EXTERNAL_MAX = 1e15;

/** The metrics whose value is a share of the samples, so an absolute max is in [0, 1]. */
const RATIO_METRICS: readonly RolloutGateMetric[] = [
  'job_failure_ratio',
  'rejection_ratio',
  'unknown_intent_ratio',
];

export interface RolloutHoldFields {
  holdSeconds?: number[];
  holdExtensionSeconds?: number;
  gates?: RolloutGate[];
  onFailure?: RolloutFailureAction;
}

/**
 * The holds (one per step, a single hold repeated), the gates and the failure action of a start's
 * body; `steps` are already valid.
 */
export function requireHoldFields(
  body: Record<string, unknown>,
  steps: number[],
): RolloutHoldFields {
  const fields: RolloutHoldFields = {};
  if (body.holdSeconds !== undefined) fields.holdSeconds = requireHolds(body.holdSeconds, steps);
  if (body.holdExtensionSeconds !== undefined) {
    if (fields.holdSeconds === undefined) {
      fail('invalid_request', 'holdExtensionSeconds needs holdSeconds', {
        field: 'holdExtensionSeconds',
      });
    }
    fields.holdExtensionSeconds = requireInteger(
      body.holdExtensionSeconds,
      'holdExtensionSeconds',
      0,
      MAX_HOLD_SECONDS,
    );
  }
  if (body.gates !== undefined) {
    if (fields.holdSeconds === undefined) {
      fail('invalid_request', "gates need holdSeconds: a gate is checked over a step's hold", {
        field: 'gates',
      });
    }
    fields.gates = requireGates(body.gates);
  }
  if (body.onFailure !== undefined) {
    if (body.onFailure !== 'rollback' && body.onFailure !== 'pause') {
      fail('invalid_request', "onFailure must be 'rollback' or 'pause'", { field: 'onFailure' });
    }
    fields.onFailure = body.onFailure;
  }
  return fields;
}

function requireHolds(value: unknown, steps: number[]): number[] {
  if (!Array.isArray(value)) {
    const hold = requireInteger(value, 'holdSeconds', 0, MAX_HOLD_SECONDS);
    return steps.map(() => hold);
  }
  if (value.length !== steps.length) {
    fail(
      'invalid_request',
      `holdSeconds must be one number of seconds, or one per step (${steps.length})`,
      { field: 'holdSeconds' },
    );
  }
  return value.map((hold, i) => requireInteger(hold, `holdSeconds[${i}]`, 0, MAX_HOLD_SECONDS));
}

function requireGates(value: unknown): RolloutGate[] {
  if (!Array.isArray(value) || value.length > MAX_GATES) {
    fail('invalid_request', `gates must be an array of at most ${MAX_GATES} gates`, {
      field: 'gates',
    });
  }
  const gates = value.map((gate, i) => requireGate(gate, `gates[${i}]`));
  const names = new Set<string>();
  gates.forEach((gate, i) => {
    if (names.has(gate.name)) {
      fail('invalid_request', `gate names must differ: ${gate.name} is used twice`, {
        field: `gates[${i}].name`,
      });
    }
    names.add(gate.name);
  });
  return gates;
}

function requireGate(value: unknown, field: string): RolloutGate {
  const body = requireObject(value, field, [
    'name',
    'metric',
    'code',
    'source',
    'minSamples',
    'max',
    'maxRatio',
    'confidence',
  ]);
  if (!ROLLOUT_GATE_METRICS.includes(body.metric as never)) {
    fail('invalid_request', `${field}.metric must be one of ${ROLLOUT_GATE_METRICS.join(', ')}`, {
      field: `${field}.metric`,
    });
  }
  const metric = body.metric as RolloutGateMetric;
  const gate: RolloutGate = {
    name: requireName(body.name, `${field}.name`),
    metric,
    minSamples: requireInteger(body.minSamples, `${field}.minSamples`, 1, MAX_MIN_SAMPLES),
  };
  if (body.code !== undefined) {
    if (metric !== 'rejection_ratio') {
      fail('invalid_request', `${field}.code is for the rejection_ratio metric only`, {
        field: `${field}.code`,
      });
    }
    if (!COMMIT_REJECTION_CODES.includes(body.code as never)) {
      fail(
        'invalid_request',
        `${field}.code must be a commit rejection code: ${COMMIT_REJECTION_CODES.join(', ')}`,
        { field: `${field}.code` },
      );
    }
    gate.code = body.code as RolloutGate['code'] & string;
  }
  if (metric === 'external') {
    gate.source = requireName(body.source, `${field}.source`);
  } else if (body.source !== undefined) {
    fail('invalid_request', `${field}.source is for the external metric only`, {
      field: `${field}.source`,
    });
  }
  Object.assign(gate, requireLimit(body, metric, field));
  return gate;
}

function requireLimit(
  body: Record<string, unknown>,
  metric: RolloutGateMetric,
  field: string,
): Pick<RolloutGate, 'max' | 'maxRatio' | 'confidence'> {
  const given = (['max', 'maxRatio', 'confidence'] as const).filter(
    (key) => body[key] !== undefined,
  );
  if (metric === 'verify_violations') {
    if (given.length > 0) {
      fail('invalid_request', `${field}: a verify_violations gate takes no limit (any fails it)`, {
        field: `${field}.${given[0]}`,
      });
    }
    return {};
  }
  if (given.length !== 1) {
    fail(
      'invalid_request',
      `${field} needs exactly one limit: max, maxRatio (to the baseline) or confidence`,
      { field },
    );
  }
  const key = given[0]!;
  if (metric === 'external' && key !== 'max') {
    fail('invalid_request', `${field}: an external metric has no baseline; give it a max`, {
      field: `${field}.${key}`,
    });
  }
  const ratio = RATIO_METRICS.includes(metric);
  const [low, high, meaning] =
    key === 'max'
      ? ratio
        ? [0, 1, 'a share from 0 to 1']
        : [-EXTERNAL_MAX, EXTERNAL_MAX, `a number from -${EXTERNAL_MAX} to ${EXTERNAL_MAX}`]
      : key === 'maxRatio'
        ? [0, MAX_RATIO, `a multiple of the baseline above 0, at most ${MAX_RATIO}`]
        : [
            MIN_CONFIDENCE,
            MAX_CONFIDENCE,
            `a probability above ${MIN_CONFIDENCE} and at most ${MAX_CONFIDENCE}, e.g. 0.95`,
          ];
  const limit = body[key];
  const exclusiveLow = key !== 'max';
  if (
    typeof limit !== 'number' ||
    !Number.isFinite(limit) ||
    limit > high ||
    limit < low ||
    (exclusiveLow && limit === low)
  ) {
    fail('invalid_request', `${field}.${key} must be ${meaning}`, { field: `${field}.${key}` });
  }
  return { [key]: limit };
}

/**
 * Refuses an external gate whose source the server does not configure for this tenant. A source
 * of another tenant is answered as one never configured, naming only this tenant's own sources,
 * so that no tenant learns another's source names.
 */
export function requireKnownSources(
  gates: readonly RolloutGate[] | undefined,
  sources: ReadonlySet<string>,
): void {
  (gates ?? []).forEach((gate, i) => {
    if (gate.source !== undefined && !sources.has(gate.source)) {
      const known = sources.size === 0 ? 'none is configured' : `known: ${[...sources].join(', ')}`;
      fail(
        'invalid_request',
        `gates[${i}].source ${gate.source} names no metric source of the server's configuration for this tenant (${known})`,
        { field: `gates[${i}].source` },
      );
    }
  });
}

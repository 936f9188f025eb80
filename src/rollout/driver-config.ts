/**
 * The rollout configuration of `fencegate serve --rollouts FILE` (docs/rollout.md, "The driver"):
 * whether this server drives rollouts, its lease and look interval, and the named external metric
 * sources gates may read. A bad file stops the server from starting.
 *
 *   {"driver": true, "leaseMs": 15000, "intervalMs": 1000,
 *    "metricSources": {"checkout-errors": {"url": "http://127.0.0.1:9100/errors", "timeoutMs": 2000}}}
 */
import { fail } from '../errors.js';
import { readJsonFile } from '../json-file.js';
import { DEFAULT_DRIVER_INTERVAL_MS, DEFAULT_DRIVER_LEASE_MS } from './driver.js';
import { requireMetricSources, type MetricSource } from './metric-sources.js';

export interface RolloutConfig {
  /** Drive rollouts with holds in this server; default true. */
  driver: boolean;
  leaseMs: number;
  intervalMs: number;
  metricSources: Record<string, MetricSource>;
}

export const DEFAULT_ROLLOUT_CONFIG: RolloutConfig = {
  driver: true,
  leaseMs: DEFAULT_DRIVER_LEASE_MS,
  intervalMs: DEFAULT_DRIVER_INTERVAL_MS,
  metricSources: {},
};

const KEYS = ['driver', 'leaseMs', 'intervalMs', 'metricSources'];

export function parseRolloutConfig(value: unknown): RolloutConfig {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('invalid_request', 'the rollout configuration must be a JSON object', {
      field: 'rollouts',
    });
  }
  const body = value as Record<string, unknown>;
  const unknown = Object.keys(body).find((key) => !KEYS.includes(key));
  if (unknown !== undefined) {
    fail('invalid_request', `unknown field ${unknown}; the fields are ${KEYS.join(', ')}`, {
      field: unknown,
    });
  }
  if (body.driver !== undefined && typeof body.driver !== 'boolean') {
    fail('invalid_request', 'driver must be true or false', { field: 'driver' });
  }
  const leaseMs = milliseconds(body.leaseMs, 'leaseMs', 1000, 600_000, DEFAULT_DRIVER_LEASE_MS);
  const intervalMs = milliseconds(
    body.intervalMs,
    'intervalMs',
    50,
    60_000,
    DEFAULT_DRIVER_INTERVAL_MS,
  );
  if (intervalMs >= leaseMs) {
    fail(
      'invalid_request',
      'intervalMs must be shorter than leaseMs, or the lease lapses between looks',
      {
        field: 'intervalMs',
      },
    );
  }
  return {
    driver: body.driver !== false,
    leaseMs,
    intervalMs,
    metricSources: requireMetricSources(body.metricSources, 'metricSources'),
  };
}

function milliseconds(
  value: unknown,
  field: string,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail('invalid_request', `${field} must be an integer from ${min} to ${max}`, { field });
  }
  return value;
}

export async function loadRolloutConfig(path: string): Promise<RolloutConfig> {
  return parseRolloutConfig(await readJsonFile(path, 'rollout configuration'));
}

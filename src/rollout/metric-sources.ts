/**
 * External metrics of rollout gates, by name (docs/rollout.md, "External metrics"). The names and
 * their URLs come from the server's rollout configuration only, never from a request: an HTTP GET
 * that answers a JSON number. A source that does not answer in time, answers an error or anything
 * but a finite number gives no reading, which a gate treats as no evidence.
 */
import { fail } from '../errors.js';
import type { ReadSource } from './gate-metrics.js';

export interface MetricSource {
  url: string;
  /** Default 2,000 ms. */
  timeoutMs?: number;
}

export const DEFAULT_SOURCE_TIMEOUT_MS = 2000;
const MAX_ANSWER_BYTES = 64 * 1024;

/** Checks the `metricSources` of a configuration: names to http(s) URLs. */
export function requireMetricSources(value: unknown, field: string): Record<string, MetricSource> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail('invalid_request', `${field} must be an object of named sources: {"NAME": {"url": …}}`, {
      field,
    });
  }
  const sources: Record<string, MetricSource> = {};
  for (const [name, source] of Object.entries(value)) {
    const at = `${field}.${name}`;
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(name)) {
      fail('invalid_request', `${at}: a source name is 1 to 64 letters, digits, '.', '_' or '-'`, {
        field: at,
      });
    }
    const { url, timeoutMs } = (source ?? {}) as { url?: unknown; timeoutMs?: unknown };
    if (typeof url !== 'string' || !/^https?:\/\//.test(url) || !URL.canParse(url)) {
      fail('invalid_request', `${at}.url must be an http:// or https:// URL`, {
        field: `${at}.url`,
      });
    }
    if (
      timeoutMs !== undefined &&
      (typeof timeoutMs !== 'number' ||
        !Number.isInteger(timeoutMs) ||
        timeoutMs < 1 ||
        timeoutMs > 60_000)
    ) {
      fail('invalid_request', `${at}.timeoutMs must be an integer from 1 to 60000`, {
        field: `${at}.timeoutMs`,
      });
    }
    sources[name] = timeoutMs === undefined ? { url } : { url, timeoutMs };
  }
  return sources;
}

/** Reads the named sources; an unknown name or a failed read is null. */
export function sourceReader(sources: Readonly<Record<string, MetricSource>>): ReadSource {
  return async (name) => {
    const source = Object.hasOwn(sources, name) ? sources[name] : undefined;
    if (source === undefined) return null;
    try {
      const answer = await fetch(source.url, {
        signal: AbortSignal.timeout(source.timeoutMs ?? DEFAULT_SOURCE_TIMEOUT_MS),
        redirect: 'error',
      });
      if (!answer.ok) return null;
      const text = await answer.text();
      if (text.length > MAX_ANSWER_BYTES) return null;
      const value: unknown = JSON.parse(text);
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    } catch {
      return null;
    }
  };
}

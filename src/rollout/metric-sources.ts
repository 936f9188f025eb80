/**
 * External metrics of rollout gates, by name (docs/rollout.md, "External metrics"). The names and
 * their URLs come from the server's rollout configuration only, never from a request: an HTTP GET
 * that answers a JSON number. A source that does not answer in time, answers an error or anything
 * but a finite number gives no reading, which a gate treats as no evidence. A source may belong to
 * some tenants only (`tenants`): to any other tenant it is as unknown as a name never configured.
 */
import type { ReadableStreamReadResult } from 'node:stream/web';
import { TENANT_PATTERN, TENANT_RULE } from '../core/limits.js';
import { fail } from '../errors.js';
import type { ReadSource } from './gate-metrics.js';

export interface MetricSource {
  url: string;
  /** Default 2,000 ms. */
  timeoutMs?: number;
  /** The tenants whose rollouts may name this source; absent: every tenant. */
  tenants?: readonly string[];
}

/** Who may name which source: the configuration's sources without their URLs. */
export type SourceAccess = Readonly<Record<string, { tenants?: readonly string[] }>>;

const MAX_SOURCE_TENANTS = 1000;

/** Whether `tenant`'s rollouts may name the source `name` of `sources`. */
export function sourceAllowed(sources: SourceAccess, name: string, tenant: string): boolean {
  if (!Object.hasOwn(sources, name)) return false;
  const { tenants } = sources[name]!;
  return tenants === undefined || tenants.includes(tenant);
}

/** The names of the sources `tenant`'s rollouts may name. */
export function sourcesOf(sources: SourceAccess, tenant: string): ReadonlySet<string> {
  return new Set(Object.keys(sources).filter((name) => sourceAllowed(sources, name, tenant)));
}

/** The sources without a tenants list: every tenant's rollouts may name them. */
export function sourcesOpenToEveryTenant(sources: SourceAccess): string[] {
  return Object.keys(sources).filter((name) => sources[name]!.tenants === undefined);
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
    const { url, timeoutMs, tenants, ...rest } = (source ?? {}) as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) {
      fail(
        'invalid_request',
        `${at}: unknown field ${extra}; the fields are url, timeoutMs, tenants`,
        {
          field: `${at}.${extra}`,
        },
      );
    }
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
    sources[name] = {
      url,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(tenants === undefined ? {} : { tenants: requireTenants(tenants, `${at}.tenants`) }),
    };
  }
  return sources;
}

function requireTenants(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_SOURCE_TENANTS) {
    fail('invalid_request', `${field} must be a list of 1 to ${MAX_SOURCE_TENANTS} tenant names`, {
      field,
    });
  }
  value.forEach((tenant, i) => {
    if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant)) {
      fail('invalid_request', `${field}[${i}] must be a tenant name (${TENANT_RULE})`, {
        field: `${field}[${i}]`,
      });
    }
  });
  return [...(value as string[])];
}

/**
 * Reads the named sources for a tenant; a name unknown or not the tenant's, or a failed read, is
 * null. Checked again at each read: a rollout started before its source was taken from its tenant
 * reads nothing.
 */
export function sourceReader(sources: Readonly<Record<string, MetricSource>>): ReadSource {
  return async (name, tenant) => {
    if (!sourceAllowed(sources, name, tenant)) return null;
    const source = sources[name]!;
    try {
      const answer = await fetch(source.url, {
        signal: AbortSignal.timeout(source.timeoutMs ?? DEFAULT_SOURCE_TIMEOUT_MS),
        redirect: 'error',
      });
      if (!answer.ok) return null;
      const text = await boundedText(answer, MAX_ANSWER_BYTES);
      if (text === null) return null;
      const value: unknown = JSON.parse(text);
      return typeof value === 'number' && Number.isFinite(value) ? value : null;
    } catch {
      return null;
    }
  };
}

/**
 * The answer's body as text, or null once it passes `max` bytes: reading stops there and the
 * connection is let go, so a source that answers without end costs the server no more than that.
 */
async function boundedText(answer: Response, max: number): Promise<string | null> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = answer.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value }: ReadableStreamReadResult<Uint8Array> = await reader.read();
    if (done) return Buffer.concat(chunks).toString('utf8');
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
}

/**
 * The operator's targets file: the only URLs a dispatcher will ever call.
 *
 *   {"targets": {"crm-webhook": {"type": "webhook", "url": "http://127.0.0.1:9000/hook",
 *                                "timeoutMs": 5000, "headers": {"x-api-key": "…"},
 *                                "tenants": ["acme"]}}}
 *
 * `tenants` names the tenants whose intents may use the target; without it, every tenant may.
 *
 * Validation errors name the file and the field, never a header value.
 */
import { readJsonFile } from '../json-file.js';
import { TARGET_PATTERN, TARGET_RULE, TENANT_PATTERN, TENANT_RULE } from '../core/limits.js';
import { FencegateError } from '../errors.js';
import type { Effector } from './effector.js';
import {
  webhookEffector,
  type WebhookEffectorOptions,
  type WebhookTarget,
} from './webhook-effector.js';

export type TargetConfig = WebhookTarget & {
  /** The tenants whose intents may use this target; absent: every tenant. */
  tenants?: readonly string[];
};

export interface TargetsConfig {
  targets: Record<string, TargetConfig>;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000;
const MIN_TIMEOUT_MS = 10;
const MAX_TIMEOUT_MS = 600_000;
const MAX_TARGETS = 256;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
/** Headers the effector itself controls. */
const RESERVED_HEADERS = new Set([
  'idempotency-key',
  'content-length',
  'host',
  'transfer-encoding',
  'connection',
]);

/** Reads and validates a targets file; throws invalid_request naming the file and the field. */
export async function loadTargets(path: string): Promise<TargetsConfig> {
  return parseTargets(await readJsonFile(path, 'targets file'), path);
}

/** Validates a parsed targets document; `source` names it in error messages. */
export function parseTargets(json: unknown, source = 'targets'): TargetsConfig {
  const problem = (field: string, message: string): never => {
    throw new FencegateError('invalid_request', `${source}: ${field} ${message}`, {
      file: source,
      field,
    });
  };
  const root = objectOf(json, 'the document', problem);
  onlyKeys(root, ['targets'], '', problem);
  const entries = Object.entries(objectOf(root.targets, 'targets', problem));
  if (entries.length === 0 || entries.length > MAX_TARGETS) {
    problem('targets', `must name 1 to ${MAX_TARGETS} targets`);
  }
  const targets: Record<string, TargetConfig> = {};
  for (const [name, value] of entries) {
    const at = `targets.${name}`;
    if (!TARGET_PATTERN.test(name)) problem(at, `is not a valid target name (${TARGET_RULE})`);
    const target = objectOf(value, at, problem);
    onlyKeys(target, ['type', 'url', 'timeoutMs', 'headers', 'tenants'], at, problem);
    if (target.type !== 'webhook')
      problem(`${at}.type`, 'must be "webhook" (the only type so far)');
    targets[name] = {
      type: 'webhook',
      url: webhookUrl(target.url, `${at}.url`, problem),
      timeoutMs: timeoutOf(target.timeoutMs, `${at}.timeoutMs`, problem),
      headers: headersOf(target.headers, `${at}.headers`, problem),
    };
    if (target.tenants !== undefined) {
      targets[name].tenants = tenantsOf(target.tenants, `${at}.tenants`, problem);
    }
  }
  return { targets };
}

/** Whether `tenant`'s intents may use `target` of the file (false for a target it lacks). */
export function targetAllows(config: TargetsConfig, target: string, tenant: string): boolean {
  const found = Object.hasOwn(config.targets, target) ? config.targets[target] : undefined;
  if (found === undefined) return false;
  return found.tenants === undefined || found.tenants.includes(tenant);
}

/** The targets without a tenants list: every tenant's intents may use them. */
export function targetsOpenToEveryTenant(config: TargetsConfig): string[] {
  return Object.entries(config.targets)
    .filter(([, target]) => target.tenants === undefined)
    .map(([name]) => name);
}

/** One effector per target of the file. */
export function effectorsFromTargets(
  config: TargetsConfig,
  options: WebhookEffectorOptions = {},
): Record<string, Effector> {
  const effectors: Record<string, Effector> = {};
  for (const [name, target] of Object.entries(config.targets)) {
    effectors[name] = webhookEffector(target, options);
  }
  return effectors;
}

type Problem = (field: string, message: string) => never;

function objectOf(value: unknown, field: string, problem: Problem): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return problem(field, 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function onlyKeys(
  value: Record<string, unknown>,
  allowed: string[],
  at: string,
  problem: Problem,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      problem(
        at === '' ? key : `${at}.${key}`,
        `is not a known field (allowed: ${allowed.join(', ')})`,
      );
    }
  }
}

function webhookUrl(value: unknown, field: string, problem: Problem): string {
  if (typeof value !== 'string') return problem(field, 'must be a string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // The URL is not echoed: it may carry credentials.
    return problem(field, 'must be an absolute http:// or https:// URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return problem(field, `must be an http:// or https:// URL, not ${url.protocol}`);
  }
  return url.href;
}

function timeoutOf(value: unknown, field: string, problem: Problem): number {
  if (value === undefined) return DEFAULT_WEBHOOK_TIMEOUT_MS;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < MIN_TIMEOUT_MS ||
    value > MAX_TIMEOUT_MS
  ) {
    return problem(
      field,
      `must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS} (milliseconds)`,
    );
  }
  return value;
}

function tenantsOf(value: unknown, field: string, problem: Problem): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_TARGETS) {
    return problem(field, `must be a list of 1 to ${MAX_TARGETS} tenant names`);
  }
  value.forEach((tenant, i) => {
    if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant)) {
      problem(`${field}[${i}]`, `must be a tenant name (${TENANT_RULE})`);
    }
  });
  if (new Set(value).size !== value.length) problem(field, 'names a tenant twice');
  return [...(value as string[])];
}

function headersOf(value: unknown, field: string, problem: Problem): Record<string, string> {
  if (value === undefined) return {};
  const headers: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(objectOf(value, field, problem))) {
    if (!HEADER_NAME.test(name)) problem(`${field}.${name}`, 'is not a valid header name');
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      problem(`${field}.${name}`, 'is set by the dispatcher and cannot be configured');
    }
    // Values are secrets (API keys): say what is wrong, never what they are.
    if (typeof headerValue !== 'string' || /[\r\n\0]/.test(headerValue)) {
      problem(`${field}.${name}`, 'must be a string without line breaks');
    }
    headers[name] = headerValue;
  }
  return headers;
}

/**
 * Building blocks of the wire schemas. The patterns and rules come from core/limits.ts, so the
 * schemas, the shared validators and the OpenAPI document all state the same rule.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import {
  MAX_LABEL_LENGTH,
  NAME_PATTERN,
  NAME_RULE,
  TARGET_PATTERN,
  TARGET_RULE,
  TENANT_PATTERN,
  TENANT_RULE,
} from '../../core/limits.js';
import { MAX_TAKE_OVER_PREFIXES } from '../../core/take-over-right.js';
import { ERROR_CATALOG, type ErrorCode } from '../../errors.js';

/** Every object on the wire is closed: an unknown field is a mistake worth reporting. */
export const CLOSED = { additionalProperties: false } as const;

export const MAX_COUNTER = Number.MAX_SAFE_INTEGER;
/** Free text a caller may attach (reasons); longer text is refused. */
export const MAX_REASON_LENGTH = 1024;
export { MAX_LABEL_LENGTH };
export const MAX_CURSOR_LENGTH = 1024;

export const Name = Type.String({
  pattern: NAME_PATTERN.source,
  minLength: 1,
  maxLength: 256,
  description: NAME_RULE,
});

/** The scope prefixes a worker token may take over (core/take-over-right.ts). */
export const TakeOverPrefixes = Type.Array(Name, {
  minItems: 1,
  maxItems: MAX_TAKE_OVER_PREFIXES,
  description: 'scope prefixes this worker token may take over',
});

export const Target = Type.String({
  pattern: TARGET_PATTERN.source,
  minLength: 1,
  maxLength: 128,
  description: TARGET_RULE,
});

export const Tenant = Type.String({
  pattern: TENANT_PATTERN.source,
  minLength: 1,
  maxLength: 63,
  description: TENANT_RULE,
});

/** Fences, revisions and sequence numbers: integers from 0 up. */
export const Counter = Type.Integer({ minimum: 0, maximum: MAX_COUNTER });

/** Store time in milliseconds since the epoch. */
export const Millis = Type.Integer({ description: 'milliseconds since the epoch (store time)' });

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

export function Reason() {
  return Type.String({ maxLength: MAX_REASON_LENGTH });
}

export function Cursor() {
  return Type.String({ maxLength: MAX_CURSOR_LENGTH, description: 'opaque; from nextCursor' });
}

const ERROR_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Union(ERROR_CODES.map((code) => Type.Literal(code))),
        message: Type.String(),
        details: Type.Record(Type.String(), Type.Unknown()),
      },
      CLOSED,
    ),
  },
  CLOSED,
);

/**
 * Request validation with the TypeBox schemas of each route. When a schema refuses a part, the
 * route's shared core validator is asked to explain: the caller gets the library's message for
 * the same input. Query strings are text, so integer fields are converted first, strictly
 * (only plain decimal digits), so `limit=1e3` or `limit=0x10` stay wrong.
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { FencegateError, isFencegateError } from '../errors.js';
import type { AnyRoute } from './route.js';

type Part = 'params' | 'querystring' | 'body';

const PART_NAMES: Record<Part, string> = { params: 'path', querystring: 'query', body: 'body' };
const DECIMAL = /^-?(0|[1-9][0-9]{0,19})$/;

export function createValidatorCompiler(
  findRoute: (method: string, url: string) => AnyRoute | undefined,
): FastifySchemaCompiler<TSchema> {
  return ({ schema, method, url, httpPart }) => {
    const checker = TypeCompiler.Compile(schema);
    const part = toPart(httpPart);
    const spec = findRoute(method, url);
    const explain = part === undefined ? undefined : spec?.explain?.[part];
    const optionalBody = part === 'body' && spec?.bodyOptional === true;
    return (data: unknown) => {
      if (optionalBody && (data === null || data === undefined)) return { value: {} };
      const value = part === 'querystring' ? convertQuery(schema, data) : data;
      if (checker.Check(value)) return { value };
      return {
        error: explainFailure(part ?? 'body', value, checker.Errors(value).First(), explain),
      };
    };
  };
}

/**
 * The refusal of one body checked on its own (an item of a batch), as the route that takes it
 * alone would answer it; undefined when it passes.
 */
export function bodyRefusal(
  checker: TypeCheck<TSchema>,
  value: unknown,
  explain: (value: unknown) => void,
): FencegateError | undefined {
  if (checker.Check(value)) return undefined;
  return explainFailure('body', value, checker.Errors(value).First(), explain);
}

function toPart(httpPart: string | undefined): Part | undefined {
  if (httpPart === 'params' || httpPart === 'querystring' || httpPart === 'body') return httpPart;
  return undefined;
}

function explainFailure(
  part: Part,
  value: unknown,
  first: { path: string; message: string; schema: TSchema } | undefined,
  explain: ((value: unknown) => void) | undefined,
): FencegateError {
  if (explain !== undefined) {
    try {
      explain(value);
    } catch (error) {
      if (isFencegateError(error)) return error;
    }
  }
  const field = fieldName(part, first?.path ?? '');
  const description =
    typeof first?.schema.description === 'string' ? first.schema.description : undefined;
  const message =
    description === undefined
      ? `${field}: ${(first?.message ?? 'invalid').toLowerCase()}`
      : `${field} must be ${description}`;
  return new FencegateError('invalid_request', message, { field });
}

/** `/writes/0/name` → `writes[0].name`; the root is named after the part. */
export function fieldName(part: Part, path: string): string {
  if (path === '') return PART_NAMES[part];
  return path
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce(
      (name, segment) =>
        /^\d+$/.test(segment)
          ? `${name}[${segment}]`
          : name === ''
            ? segment
            : `${name}.${segment}`,
      '',
    );
}

function convertQuery(schema: TSchema, data: unknown): unknown {
  if (typeof data !== 'object' || data === null) return {};
  const properties = (schema as { properties?: Record<string, TSchema> }).properties ?? {};
  return Object.fromEntries(
    Object.entries(data).map(([key, raw]) => {
      const type: unknown = Object.hasOwn(properties, key) ? properties[key]?.type : undefined;
      if (type === 'integer' && typeof raw === 'string' && DECIMAL.test(raw))
        return [key, Number(raw)];
      return [key, raw];
    }),
  );
}

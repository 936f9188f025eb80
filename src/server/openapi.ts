/**
 * The OpenAPI 3.1 document, generated from the registered routes: the same schemas that validate
 * requests describe them here, so the document cannot drift from the server. OpenAPI 3.1 speaks
 * JSON Schema, which TypeBox schemas are.
 */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, type ErrorCode } from '../errors.js';
import type { RetryClass } from '../route-table.js';
import type { AnyRoute } from './route.js';
import { NAMED_ANSWER_SCHEMAS } from './schemas/answers.js';
import { ErrorBody } from './schemas/common.js';

type Json = Record<string, unknown>;

const COMPONENTS: Record<string, TSchema> = { ...NAMED_ANSWER_SCHEMAS, Error: ErrorBody };

export function buildOpenApiDocument(routes: readonly AnyRoute[], version: string): Json {
  const names = new Map<unknown, string>(
    Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]),
  );
  const paths: Record<string, Record<string, Json>> = {};
  for (const spec of routes) {
    if (spec.name === null || spec.retry === null) continue;
    const path = spec.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = operation(spec, spec.retry, names);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'fencegate',
      version,
      description:
        'Fencing, leases and revision checks at the commit boundary. Errors are {"error": {code, message, details}}.',
    },
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: Object.fromEntries(
        Object.entries(COMPONENTS).map(([name, schema]) => [name, plain(schema, names, true)]),
      ),
    },
  };
}

function operation(spec: AnyRoute, retry: RetryClass, names: Map<unknown, string>): Json {
  const op: Json = {
    operationId: operationId(spec),
    summary: spec.summary,
    tags: [spec.tag],
    security: spec.auth === 'public' ? [] : [{ bearer: [] }],
    'x-fencegate-role': spec.auth,
    // The route table's retry class: what a client may do after this request's reply was lost.
    'x-fencegate-retry': retry,
  };
  const parameters = [
    ...parametersOf(spec.params, 'path', names),
    ...parametersOf(spec.querystring, 'query', names),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  if (spec.body !== undefined) {
    op.requestBody = {
      required: spec.bodyOptional !== true,
      content: { 'application/json': { schema: plain(spec.body, names) } },
    };
  }
  const responses: Json = {};
  for (const [status, doc] of Object.entries(spec.responses)) {
    responses[status] = {
      description: doc.description,
      ...(doc.schema === undefined && doc.contentType === undefined
        ? {}
        : {
            content: {
              [doc.contentType ?? 'application/json']:
                doc.schema === undefined ? {} : { schema: plain(doc.schema, names) },
            },
          }),
    };
  }
  for (const [status, codes] of errorStatuses(spec)) {
    if (responses[status] !== undefined) continue;
    responses[status] = {
      description: `error: ${codes.join(', ')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  op.responses = responses;
  return op;
}

function errorStatuses(spec: AnyRoute): Map<string, ErrorCode[]> {
  const codes = new Set<ErrorCode>(spec.errors ?? []);
  if (spec.params !== undefined || spec.querystring !== undefined || spec.body !== undefined) {
    codes.add('invalid_request');
  }
  if (spec.body !== undefined) {
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
  }
  if (spec.auth !== 'public') {
    codes.add('unauthorized');
    codes.add('forbidden');
    codes.add('store_unavailable');
  }
  codes.add('internal_error');
  const byStatus = new Map<string, ErrorCode[]>();
  for (const code of codes) {
    const status = String(ERROR_CATALOG[code].httpStatus);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

function parametersOf(
  schema: TSchema | undefined,
  where: 'path' | 'query',
  names: Map<unknown, string>,
): Json[] {
  if (schema === undefined) return [];
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: plain(property, names),
  }));
}

function operationId(spec: AnyRoute): string {
  const words = spec.url
    .split('/')
    .filter((part) => part !== '' && part !== 'v1')
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .join('-')
    .replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) =>
      (next ?? '').toUpperCase(),
    );
  return `${spec.method.toLowerCase()}${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

/** A plain JSON copy of a schema, with named schemas replaced by references to the components. */
function plain(schema: unknown, names: Map<unknown, string>, isComponentRoot = false): unknown {
  if (!isComponentRoot && names.has(schema))
    return { $ref: `#/components/schemas/${names.get(schema)}` };
  if (Array.isArray(schema)) return schema.map((item) => plain(item, names));
  if (typeof schema !== 'object' || schema === null) return schema;
  // Object.entries skips TypeBox's symbol keys, which have no place in a JSON document.
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, plain(value, names)]),
  );
}

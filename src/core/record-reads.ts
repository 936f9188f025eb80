/**
 * Several reads of one scope in one request: records by name and pages of records, each answered
 * exactly as its own read would be (`getRecord`, `listRecordsPage`), in the order asked. A reader
 * that needs a page and the records it names pays one exchange instead of one per read. The
 * reads are not one snapshot: a commit may land between two of them, as between two requests.
 */
import { fail, FencegateError } from '../errors.js';
import type { ListRecordsQuery, Page, RecordState } from '../types.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { validateListRecords } from './record-page.js';
import { requireName, requireObject } from './validate.js';

export interface RecordReads {
  /** Record names, each read as `getRecord` reads it. */
  records?: string[];
  /** Page queries, each read as `listRecordsPage` reads it. */
  pages?: ListRecordsQuery[];
}

export interface RecordReadsResult {
  /** The records, in the order of `records`. */
  records: RecordState[];
  /** The pages, in the order of `pages`. */
  pages: Page<RecordState>[];
}

/** At least one read and at most `limits.maxReads` (a commit's bound on reads), both kinds together. */
export function validateRecordReads(
  input: unknown,
  limits: Limits = DEFAULT_LIMITS,
): Required<RecordReads> {
  const body = requireObject(input ?? {}, 'body', ['records', 'pages']);
  const records = listOf(body.records, 'records').map((name, i) =>
    requireName(name, `records[${i}]`),
  );
  const pages = listOf(body.pages, 'pages').map((query, i) => {
    try {
      return validateListRecords(query, limits);
    } catch (error) {
      throw withinPage(error, i);
    }
  });
  const count = records.length + pages.length;
  if (count === 0) {
    fail('invalid_request', 'name at least one record or page to read', { field: 'records' });
  }
  if (count > limits.maxReads) {
    fail(
      'invalid_request',
      `at most ${limits.maxReads} reads in one request, records and pages together`,
      {
        field: 'pages',
        max: limits.maxReads,
      },
    );
  }
  return { records, pages };
}

function listOf(value: unknown, field: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('invalid_request', `${field} must be an array`, { field });
  return value;
}

/** A page query's refusal, its field named within the request (`pages[1].limit`). */
function withinPage(error: unknown, index: number): unknown {
  if (!(error instanceof FencegateError)) return error;
  const field = typeof error.details.field === 'string' ? `.${error.details.field}` : '';
  return new FencegateError(error.code, `pages[${index}]: ${error.message}`, {
    ...error.details,
    field: `pages[${index}]${field}`,
  });
}

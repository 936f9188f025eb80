/**
 * Several reads of one scope in one request: records by name and pages of records, each answered
 * exactly as its own read would be (`getRecord`, `listRecordsPage`), in the order asked. A reader
 * that needs a page and the records it names pays one exchange instead of one per read. The
 * reads are not one snapshot: a commit may land between two of them, as between two requests.
 *
 * One request is bounded by what it may return, not by how many reads it names: its names and
 * its pages' limits count together against the limit of one listing, a range is read once, and
 * the whole answer shares one byte budget (answer-budget.ts), so many pages of one large scope
 * cannot multiply the memory and time one answer takes.
 */
import { fail, FencegateError } from '../errors.js';
import type { ListRecordsQuery, Page, RecordState } from '../types.js';
import { jsonValueBytes } from './answer-budget.js';
import { DEFAULT_LIMITS, DEFAULT_LIST_LIMIT, type Limits } from './limits.js';
import {
  resolveRecordPage,
  startCursor,
  validateListRecords,
  type SizedPage,
} from './record-page.js';
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

/**
 * At least one read and at most `limits.maxReads` (a commit's bound on reads), both kinds
 * together; at most `limits.maxListLimit` records, each name counting one and each page its limit;
 * no more names than the budget holds of the largest values (namesWithinBudget); no page over the
 * range of an earlier one.
 */
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
  const maxNames = namesWithinBudget(limits);
  if (records.length > maxNames) {
    fail(
      'invalid_request',
      `at most ${maxNames} records by name in one request, so their values fit the ` +
        `${limits.maxPageBytes} bytes one answer holds; name the others in another request`,
      { field: 'records', max: maxNames },
    );
  }
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
  const reach = pages.reduce((sum, page) => sum + (page.limit ?? DEFAULT_LIST_LIMIT), 0);
  if (records.length + reach > limits.maxListLimit) {
    fail(
      'invalid_request',
      `at most ${limits.maxListLimit} records in one request: each name counts one and each page ` +
        `its limit (${DEFAULT_LIST_LIMIT} without one); this one asks for ${records.length + reach}`,
      { field: 'pages', max: limits.maxListLimit },
    );
  }
  refuseRepeatedRanges(pages);
  return { records, pages };
}

/** As many records by name as fit the byte budget when each holds the largest value allowed. */
export function namesWithinBudget(limits: Limits): number {
  return Math.max(1, Math.floor(limits.maxPageBytes / limits.maxValueBytes));
}

/**
 * Where a page starts and what it ranges over; the limit aside, two pages that agree on it read
 * the same records.
 */
function rangeOf(query: ListRecordsQuery): string {
  const page = resolveRecordPage(query, 0);
  return JSON.stringify([page.prefix, page.order, page.descending, page.position]);
}

function refuseRepeatedRanges(pages: ListRecordsQuery[]): void {
  const seen = new Map<string, number>();
  pages.forEach((query, index) => {
    const range = rangeOf(query);
    const earlier = seen.get(range);
    if (earlier !== undefined) {
      fail(
        'invalid_request',
        `pages[${index}] reads the same range as pages[${earlier}]; ask for it once, with the ` +
          'limit you need',
        { field: `pages[${index}]` },
      );
    }
    seen.set(range, index);
  });
}

/** Where the reads of one request are read: the store under a tenant and scope. */
export interface RecordReadSource {
  record(name: string): Promise<RecordState>;
  page(query: ListRecordsQuery, maxBytes: number): Promise<SizedPage>;
}

/**
 * The reads of one validated request within one byte budget: the records named first (few
 * enough that their values fit it), then the pages in the order asked, each given what the
 * earlier reads left. A page given something holds at least one record, so the answer passes
 * the budget by one record at most; a page given nothing is not read, and answers no record and
 * a cursor that reads it from its start.
 */
export async function readWithinBudget(
  reads: Required<RecordReads>,
  maxBytes: number,
  source: RecordReadSource,
): Promise<RecordReadsResult> {
  const records = await Promise.all(reads.records.map((name) => source.record(name)));
  let spent = records.reduce((sum, record) => sum + jsonValueBytes(record.value), 0);
  const pages: Page<RecordState>[] = [];
  for (const query of reads.pages) {
    if (spent >= maxBytes) {
      pages.push({ items: [], nextCursor: startCursor(resolveRecordPage(query, 0)) });
      continue;
    }
    const { items, nextCursor, bytes } = await source.page(query, maxBytes - spent);
    spent += bytes;
    pages.push({ items, nextCursor });
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

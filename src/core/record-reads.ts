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
import { resolveRecordPage, validateListRecords } from './record-page.js';
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
 * no page over the range of an earlier one.
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
  page(query: ListRecordsQuery, maxBytes: number): Promise<Page<RecordState>>;
}

/**
 * The reads of one validated request within one byte budget: the records named first (each
 * counted whole; at most `maxReads` of them), then the pages in the order asked, each given what
 * the earlier reads left. A page always holds one record, so it moves on even when the budget is
 * spent; its cursor reads on with a budget of its own.
 */
export async function readWithinBudget(
  reads: Required<RecordReads>,
  maxBytes: number,
  source: RecordReadSource,
): Promise<RecordReadsResult> {
  const records = await Promise.all(reads.records.map((name) => source.record(name)));
  let spent = bytesOf(records);
  const pages: Page<RecordState>[] = [];
  for (const query of reads.pages) {
    const page = await source.page(query, Math.max(0, maxBytes - spent));
    spent += bytesOf(page.items);
    pages.push(page);
  }
  return { records, pages };
}

function bytesOf(records: RecordState[]): number {
  return records.reduce((sum, record) => sum + jsonValueBytes(record.value), 0);
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

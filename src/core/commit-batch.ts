/** The shape of a batch of commits (`commitMany`, `POST /v1/commits`), before its items are checked. */
import { FencegateError } from '../errors.js';
import { MAX_BATCH_COMMITS } from './limits.js';

/** The batch as a list of 1 to MAX_BATCH_COMMITS items; each item is checked on its own later. */
export function requireCommitBatch<T>(commits: readonly T[]): readonly T[] {
  // Checked for callers in plain JavaScript, whose argument the type does not hold to.
  const given: unknown = commits;
  if (!Array.isArray(given)) {
    throw new FencegateError('invalid_request', 'commits must be a list of commits', {
      field: 'commits',
    });
  }
  if (commits.length === 0 || commits.length > MAX_BATCH_COMMITS) {
    throw new FencegateError(
      'invalid_request',
      `commits must hold 1 to ${MAX_BATCH_COMMITS} commits, not ${commits.length}: split a longer batch`,
      { field: 'commits', max: MAX_BATCH_COMMITS, given: commits.length },
    );
  }
  return commits;
}

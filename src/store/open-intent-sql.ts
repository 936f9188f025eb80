/**
 * The open intent statuses (OPEN_INTENT_STATUSES) as an SQL list, `('pending', 'unknown',
 * 'claimed')`, for the statements and schemas of both SQL adapters: a status added to the set
 * reaches every open-intent listing at once.
 */
import { OPEN_INTENT_STATUSES } from './plan-rows.js';

export const OPEN_INTENT_SQL_LIST = `(${[...OPEN_INTENT_STATUSES]
  .map((status) => `'${status}'`)
  .join(', ')})`;

/**
 * Prints the route table as JSON, with the retry classes and the lease-lost codes of the error
 * catalog, for clients generated in other languages: `npx tsx scripts/route-table-json.ts`.
 */
import { COMMIT_AUTHORITY_LOST_CODES, RENEWAL_LEASE_LOST_CODES } from '../src/errors.js';
import { RETRY_CLASSES, routeTableJson } from '../src/route-table.js';

const document = {
  ...routeTableJson(),
  retryClasses: RETRY_CLASSES,
  leaseLostCodes: { renewal: RENEWAL_LEASE_LOST_CODES, commit: COMMIT_AUTHORITY_LOST_CODES },
};
process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);

/** Writes docs/errors.md from the error catalog: `npx tsx scripts/write-errors-doc.ts`. */
import { writeFileSync } from 'node:fs';
import { renderErrorsDoc } from '../src/errors-doc.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorsDoc());

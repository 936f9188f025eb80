import { afterAll, describe } from 'vitest';
import { defineSigkillCase } from '../e2e/sigkill-under-load.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('sigkill');
afterAll(() => dropSchema(pgUrl(), schema));

// Each case starts server processes (about a second of CPU each); under the whole suite's load a
// case has taken half the default 30 s.
describe.skipIf(noPostgres)('PostgreSQL', { timeout: 60_000 }, () => {
  defineSigkillCase(() => `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}schema=${schema}`);
});

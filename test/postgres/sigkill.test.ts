import { afterAll, describe } from 'vitest';
import { defineSigkillCase } from '../e2e/sigkill-under-load.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';
import { skipWithoutPostgres } from '../helpers/stores/postgres.js';

/** The whole file is skipped, and reported, on a machine without PostgreSQL. */
const noPostgres = skipWithoutPostgres();

const schema = testSchema('sigkill');
afterAll(() => dropSchema(pgUrl(), schema));

describe.skipIf(noPostgres)('PostgreSQL', () => {
  defineSigkillCase(() => `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}schema=${schema}`);
});

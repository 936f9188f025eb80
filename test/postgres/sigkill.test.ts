import { afterAll, describe } from 'vitest';
import { defineSigkillCase } from '../e2e/sigkill-under-load.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';

const schema = testSchema('sigkill');
afterAll(() => dropSchema(pgUrl(), schema));

describe('PostgreSQL', () => {
  defineSigkillCase(() => `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}schema=${schema}`);
});

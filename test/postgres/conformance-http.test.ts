/** The conformance suite over HTTP: two `fencegate serve` processes on one PostgreSQL schema. */
import { defineHttpConformanceSuite } from '../server/http-conformance.js';
import { dropSchema, pgUrl, testSchema } from './pg-helpers.js';

const schema = testSchema('http_conformance');

defineHttpConformanceSuite({
  name: 'http on postgres (fencegate serve + FencegateClient)',
  storeUrl: () => `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}schema=${schema}`,
  cleanup: () => dropSchema(pgUrl(), schema),
});

/** The conformance suite over HTTP: two `fencegate serve` processes on one SQLite file. */
import { join } from 'node:path';
import { tempDir } from '../helpers/temp-dir.js';
import { defineHttpConformanceSuite } from './http-conformance.js';

const dir = tempDir('fencegate-http-conformance-');

defineHttpConformanceSuite({
  name: 'http on sqlite (fencegate serve + FencegateClient)',
  storeUrl: () => `sqlite:${join(dir.path, 'store.db')}`,
  cleanup: () => dir.cleanup(),
});

import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { defineSigkillCase } from './sigkill-under-load.js';

const dir = tempDir('fencegate-sigkill-');
afterAll(() => dir.cleanup());

describe('SQLite', () => {
  defineSigkillCase(() => `sqlite:${join(dir.path, 'store.db')}`);
});

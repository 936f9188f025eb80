/**
 * The first-run tokens file: an existing file is written only when it is a plain file of this
 * user with one name. A symbolic link, a file another user owns or one with a second hard link is
 * refused with one line naming the file and what to do, and is left as it was.
 */
import { chownSync, linkSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SecretFile } from '../../src/cli/secret-file.js';
import { tempDir } from '../helpers/temp-dir.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function dir(): string {
  const made = tempDir();
  cleanups.push(made.cleanup);
  return made.path;
}

/** The uid of `nobody`, for a file another user owns (the tests run as root to chown). */
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;

describe('the first-run tokens file', () => {
  it('writes a file of this user that is already there', async () => {
    const path = join(dir(), 'tokens.txt');
    writeFileSync(path, 'old');
    const file = await SecretFile.open(path);
    await file.write('secret');
    expect(readFileSync(path, 'utf8')).toBe('secret');
  });

  it('refuses a symbolic link, and leaves its target as it was', async () => {
    const base = dir();
    const target = join(base, 'elsewhere.txt');
    writeFileSync(target, 'keep');
    const path = join(base, 'tokens.txt');
    symlinkSync(target, path);
    await expect(SecretFile.open(path)).rejects.toThrow(
      `${path} is a symbolic link: name a new file, or a plain file of this user`,
    );
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('refuses a file with a second name, and leaves it as it was', async () => {
    const base = dir();
    const other = join(base, 'other.txt');
    writeFileSync(other, 'keep');
    const path = join(base, 'tokens.txt');
    linkSync(other, path);
    await expect(SecretFile.open(path)).rejects.toThrow(
      `${path} has other names (hard links): name a new file, or a plain file of this user`,
    );
    expect(readFileSync(other, 'utf8')).toBe('keep');
  });

  it.runIf(isRoot)('refuses a file another user owns, and leaves it as it was', async () => {
    const path = join(dir(), 'tokens.txt');
    writeFileSync(path, 'keep');
    chownSync(path, NOBODY, NOBODY);
    await expect(SecretFile.open(path)).rejects.toThrow(
      `${path} belongs to another user: name a new file, or a plain file of this user`,
    );
    expect(readFileSync(path, 'utf8')).toBe('keep');
  });
});

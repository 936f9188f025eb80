/**
 * The file --first-run-tokens-file names, opened before the server starts. First-run tokens are
 * made once and shown once, so a path that cannot be written must fail before they exist rather
 * than after. Opening leaves a file already there as it is; writing replaces its content, readable
 * and writable by its owner only. A file already there is written only when it is a plain file of
 * this user with one name: the secret must not follow a link into another file, nor go to a file
 * another user can read or rename.
 */
import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';

/** An existing file the secret must not be written to: the message names it and what to do. */
export class UnsafeSecretFile extends Error {
  constructor(path: string, why: string) {
    super(`${path} ${why}: name a new file, or a plain file of this user`);
  }
}

export class SecretFile {
  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    /** Made by this open: removed again when there is nothing to write. */
    private readonly created: boolean,
  ) {}

  static async open(path: string): Promise<SecretFile> {
    try {
      return new SecretFile(path, await open(path, 'wx', 0o600), true);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return new SecretFile(path, await openExisting(path), false);
  }

  /** Replaces the file's content with `text` and closes it. */
  async write(text: string): Promise<void> {
    try {
      // An existing file keeps its mode on open: narrow it before the secret is written.
      await this.handle.chmod(0o600);
      await this.handle.truncate(0);
      await this.handle.writeFile(text);
      await this.handle.sync();
    } finally {
      await this.handle.close();
    }
  }

  /** Nothing to write: closes the file, and removes it if the open made it. */
  async discard(): Promise<void> {
    await this.handle.close();
    if (this.created) await rm(this.path, { force: true });
  }
}

/** Opens a file already there for writing, without following a link, once it is safe to write. */
async function openExisting(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDWR | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new UnsafeSecretFile(path, 'is a symbolic link');
    throw error;
  }
  const unsafe = whyUnsafe(await handle.stat());
  if (unsafe === null) return handle;
  await handle.close();
  throw new UnsafeSecretFile(path, unsafe);
}

function whyUnsafe(stat: { isFile(): boolean; uid: number; nlink: number }): string | null {
  if (!stat.isFile()) return 'is not a plain file';
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return 'belongs to another user';
  if (stat.nlink > 1) return 'has other names (hard links)';
  return null;
}

/**
 * The file --first-run-tokens-file names, opened before the server starts. First-run tokens are
 * made once and shown once, so a path that cannot be written must fail before they exist rather
 * than after. Opening leaves a file already there as it is; writing replaces its content, readable
 * and writable by its owner only.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';

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
    return new SecretFile(path, await open(path, 'r+'), false);
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

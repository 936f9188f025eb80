/**
 * Another version of fencegate (a git ref, e.g. the commit before a change) checked out beside
 * the tree, so a benchmark measures it in the same run as the working tree: same machine, same
 * hour, rounds interleaved. The checkout shares this tree's node_modules and is removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface BaselineCheckout {
  ref: string;
  /** The short commit id the ref names. */
  commit: string;
  /** Imports a module of the checkout by its path from the tree's root (e.g. src/gate.js). */
  load<T>(path: string): Promise<T>;
  remove(): Promise<void>;
}

export async function checkOutBaseline(ref: string): Promise<BaselineCheckout> {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: ROOT })
    .toString()
    .trim();
  const parent = await mkdtemp(join(tmpdir(), 'fencegate-baseline-'));
  const dir = join(parent, 'tree');
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: ROOT, stdio: 'ignore' });
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return {
    ref,
    commit,
    load: async <T>(path: string) => (await import(join(dir, path))) as T,
    remove: async () => {
      execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: ROOT, stdio: 'ignore' });
      await rm(parent, { recursive: true, force: true });
    },
  };
}

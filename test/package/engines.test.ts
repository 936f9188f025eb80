/**
 * `npm install fencegate` on the oldest Node the package declares installs without an engine
 * warning: no package that fencegate's own dependencies bring in (package-lock.json, resolved as
 * npm resolves it: the nearest node_modules first) asks for a newer Node than `engines.node`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  engines?: { node?: string } | string[];
}

const root = new URL('../../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  dependencies: Record<string, string>;
  engines: { node: string };
};
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

/** The lock path npm uses for `name` required from the package at `from`. */
function resolve(from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (lock.packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

/** Every lock path of the production closure of fencegate's dependencies. */
function productionClosure(): string[] {
  const seen = new Set<string>();
  const queue = Object.keys(manifest.dependencies).map((name) => resolve('', name));
  while (queue.length > 0) {
    const path = queue.pop();
    if (path === undefined || seen.has(path)) continue;
    seen.add(path);
    const entry = lock.packages[path]!;
    for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) {
      queue.push(resolve(path, name));
    }
  }
  return [...seen];
}

/** The least major version of Node a range such as `>=18`, `^20.17.0 || >=22.9.0` admits. */
function leastMajor(range: string): number {
  const majors = range.split('||').map((part) => Number(/(\d+)/.exec(part)?.[1] ?? 0));
  return Math.min(...majors);
}

describe('the engines of what `npm install fencegate` brings', () => {
  it(`asks for no Node newer than fencegate's own ${manifest.engines.node}`, () => {
    const oldest = leastMajor(manifest.engines.node);
    const tooNew = productionClosure().flatMap((path) => {
      const engines = lock.packages[path]!.engines;
      const node = Array.isArray(engines) ? undefined : engines?.node;
      return node !== undefined && leastMajor(node) > oldest ? [`${path} (node ${node})`] : [];
    });
    expect(tooNew).toEqual([]);
  });
});

/**
 * Every command line pays for what the CLI loads before it parses its arguments: the HTTP
 * server (Fastify, its logger, its metrics) loads only when `serve` runs, so the core-loop
 * commands and the docs' walk-throughs start as fast as Node does.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dist = (path: string) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));

/** The packages loaded once `module` (built) is imported, as a fresh process sees them. */
async function packagesLoadedBy(module: string): Promise<string[]> {
  const program = `
    import { createRequire } from 'node:module';
    await import(${JSON.stringify(dist(module))});
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    const names = loaded.map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]);
    console.log(JSON.stringify([...new Set(names.filter(Boolean))]));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', program]);
  return JSON.parse(stdout) as string[];
}

describe('the CLI at start-up', () => {
  it('loads neither the HTTP server nor its logger or metrics until serve runs', async () => {
    const loaded = await packagesLoadedBy('cli/main.js');
    expect(loaded).not.toContain('fastify');
    expect(loaded).not.toContain('pino');
    expect(loaded).not.toContain('prom-client');
    // What this probe sees when the server is loaded.
    expect(await packagesLoadedBy('server/start-server.js')).toEqual(
      expect.arrayContaining(['fastify', 'pino', 'prom-client']),
    );
  });
});

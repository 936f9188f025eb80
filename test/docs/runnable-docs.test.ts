/**
 * Every code block of README.md and docs/ marked `<!-- runnable -->` runs as it stands: a shell
 * block line by line against a real server (the built CLI, run as `npx fencegate` is in a clone;
 * run `npm run build` first), each line exiting 0 unless its comment says `(exit N)`; a TypeScript
 * block as a program in a folder of its own that has the package installed.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, it, type ExpectStatic } from 'vitest';
import type { RunningServer } from '../../src/server/start-server.js';
import { operatorServer } from '../helpers/operator-server.js';
import { tempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/fencegate.js');
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MARKED = /<!-- runnable -->\n+```(\w+)\n([\s\S]*?)\n```/g;

interface Block {
  where: string;
  language: string;
  code: string;
}

function markedBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)];
  return files
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return [...text.matchAll(MARKED)].map((match) => ({
        where: `${file}:${text.slice(0, match.index).split('\n').length}`,
        language: match[1]!,
        code: match[2]!,
      }));
    });
}

function exec(file: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<{ code: number; output: string }>((resolve) => {
    execFile(file, args, { ...options, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}

const blocks = markedBlocks();
const dir = tempDir('fencegate-runnable-docs-');
let server: RunningServer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const started = await operatorServer(dir.path, 'dev');
  server = started.server;
  env = { ...process.env, ...started.env };
});

afterAll(async () => {
  await server.close();
  dir.cleanup();
});

/** `npx fencegate` as it runs in a clone, without npm's start-up time for every line. */
const NPX = `npx() { if [ "$1" = fencegate ]; then shift; node '${BIN}' "$@"; else command npx "$@"; fi; }`;

async function runShell(block: Block, expect: ExpectStatic): Promise<void> {
  for (const line of block.code.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'))) {
    const expected = Number(/\(exit (\d)\)/.exec(line)?.[1] ?? 0);
    const run = await exec('bash', ['-c', `${NPX}\n${line}`], { cwd: ROOT, env });
    expect({ line, code: run.code }, run.output).toEqual({ line, code: expected });
  }
}

async function runTypeScript(block: Block, expect: ExpectStatic): Promise<void> {
  const folder = join(dir.path, block.where.replace(/[^\w]/g, '-'));
  mkdirSync(join(folder, 'node_modules'), { recursive: true });
  // The package installed beside the program, as in a project that depends on it.
  symlinkSync(ROOT, join(folder, 'node_modules', 'fencegate'));
  writeFileSync(join(folder, 'package.json'), '{"type": "module"}\n');
  writeFileSync(join(folder, 'block.ts'), block.code);
  for (const round of [1, 2]) {
    // Twice: what it creates must not stop it from running again.
    const run = await exec(process.execPath, ['--import', TSX, 'block.ts'], { cwd: folder, env });
    expect({ round, code: run.code }, run.output).toEqual({ round, code: 0 });
    expect(run.output).not.toMatch(/rejected|Error/);
  }
}

// The blocks share nothing but the server (each walks its own scopes and operation ids; a TypeScript
// block has its own folder and store), so they run at once: the suite waits for the longest block,
// not for all of them one after another.
describe.concurrent('runnable blocks of the docs', () => {
  it('include the README walk-through of the CLI and its library snippet', ({ expect }) => {
    expect(blocks.map((block) => block.language).sort()).toEqual(
      expect.arrayContaining(['sh', 'ts']),
    );
  });

  for (const block of blocks) {
    it(`${block.where} (${block.language}) runs`, async ({ expect }) => {
      if (block.language === 'sh') await runShell(block, expect);
      else if (block.language === 'ts') await runTypeScript(block, expect);
      else throw new Error(`${block.where}: no runner for ${block.language} blocks`);
    }, 120_000);
  }
});

/**
 * `npm run check`: type check, lint and formatting, as `npm run typecheck`, `lint` and
 * `format:check` do one by one, in about half the time: the TypeScript program is built once and
 * handed to ESLint's type-aware rules (which would otherwise build it again), and Prettier runs in
 * a second process meanwhile. The Python client is checked at the same time, in processes of its
 * own: `ruff check`, `ruff format --check` and `mypy` (strict), from clients/python/.venv, over
 * the package and its scripts (clients/python/pyproject.toml says what they cover). Exits non-zero
 * when any of them finds something, or when the Python tools are not installed. After a check
 * that passed, the next one checks and lints again only what changed or what a change affects
 * (scripts/check-cache.js); a fresh clone checks everything.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { CheckCache } from './check-cache.js';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);

function run(command, args, cwd) {
  const child = spawn(command, args, { cwd, stdio: 'inherit' });
  return new Promise((resolve) => {
    child.on('error', (error) => {
      console.error(`${command}: ${error.message}`);
      resolve(false);
    });
    child.on('close', (code) => resolve(code === 0));
  });
}

function formatCheck() {
  const prettier = require.resolve('prettier/bin/prettier.cjs');
  // Prettier's cache is keyed by each file's content and the options: a file it passed before
  // and that has not changed passes again, so only changed files are formatted (a cold run, as
  // in CI, formats them all).
  const cache = ['--cache', '--cache-strategy', 'content'];
  return run(process.execPath, [prettier, '--check', '.', ...cache], root);
}

/** The Python client's checks, by name; each resolves to whether it passed. */
function pythonChecks() {
  const project = `${root}/clients/python`;
  const bin = `${project}/.venv/bin`;
  const checks = {
    'ruff check': ['ruff', ['check', '--quiet']],
    'ruff format': ['ruff', ['format', '--check', '--quiet']],
    mypy: ['mypy', []],
  };
  const missing = ['ruff', 'mypy'].filter((tool) => !existsSync(`${bin}/${tool}`));
  if (missing.length > 0) {
    console.error(
      `the Python checks need ${missing.join(' and ')} in clients/python/.venv, which has ` +
        'none: run `bash clients/python/scripts/install-test-deps.sh` (it installs the pins of ' +
        'clients/python/scripts/test-requirements.txt)',
    );
    return Object.fromEntries(Object.keys(checks).map((name) => [name, Promise.resolve(false)]));
  }
  return Object.fromEntries(
    Object.entries(checks).map(([name, [tool, args]]) => [
      name,
      run(`${bin}/${tool}`, args, project),
    ]),
  );
}

function typeCheck(cache) {
  const { program, diagnostics, affected } = cache.typeCheck();
  if (diagnostics.length > 0) {
    const host = {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => '\n',
    };
    console.error(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  }
  return { program, affected, ok: diagnostics.length === 0 };
}

/** Lints what changed or what the type check found affected; returns the files and whether all passed. */
async function lint(cache, program, affected) {
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { projectService: false, programs: [program] } },
      },
    ],
  });
  const files = await cache.candidates(eslint);
  const paths = cache.toLint(files, affected).map(([path]) => path);
  const results = paths.length === 0 ? [] : await eslint.lintFiles(paths);
  const formatter = await eslint.loadFormatter('stylish');
  const report = await formatter.format(results);
  if (report) console.error(report);
  return { files, ok: results.every((result) => result.errorCount === 0) };
}

const formatted = formatCheck();
const python = pythonChecks();
const cache = new CheckCache(root);
const { program, affected, ok: typed } = typeCheck(cache);
const linted = await lint(cache, program, affected);
const results = { typecheck: typed, lint: linted.ok, format: await formatted };
for (const [name, passed] of Object.entries(python)) results[name] = await passed;
const failed = Object.keys(results).filter((name) => !results[name]);
if (failed.length > 0) {
  console.error(`check failed: ${failed.join(', ')}`);
  process.exit(1);
}
cache.savePassed(linted.files);
console.log(`check passed: ${Object.keys(results).join(', ')}`);

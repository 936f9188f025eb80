/**
 * `npm run check`: type check, lint and formatting, as `npm run typecheck`, `lint` and
 * `format:check` do one by one, in about half the time: the TypeScript program is built once and
 * handed to ESLint's type-aware rules (which would otherwise build it again), and Prettier runs in
 * a second process meanwhile. The Python client is checked at the same time, in processes of its
 * own: `ruff check`, `ruff format --check` and `mypy` (strict), from clients/python/.venv, over
 * the package and its scripts (clients/python/pyproject.toml says what they cover). Exits non-zero
 * when any of them finds something, or when the Python tools are not installed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';

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

function typeCheck() {
  const configFile = ts.readConfigFile(`${root}/tsconfig.json`, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: { ...parsed.options, noEmit: true },
  });
  const diagnostics = [...parsed.errors, ...ts.getPreEmitDiagnostics(program)];
  if (diagnostics.length > 0) {
    const host = {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => '\n',
    };
    console.error(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  }
  return { program, ok: diagnostics.length === 0 };
}

async function lint(program) {
  const eslint = new ESLint({
    cwd: root,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { projectService: false, programs: [program] } },
      },
    ],
  });
  const results = await eslint.lintFiles(['.']);
  const formatter = await eslint.loadFormatter('stylish');
  const report = await formatter.format(results);
  if (report) console.error(report);
  return results.every((result) => result.errorCount === 0);
}

const formatted = formatCheck();
const python = pythonChecks();
const { program, ok: typed } = typeCheck();
const linted = await lint(program);
const results = { typecheck: typed, lint: linted, format: await formatted };
for (const [name, passed] of Object.entries(python)) results[name] = await passed;
const failed = Object.keys(results).filter((name) => !results[name]);
if (failed.length > 0) {
  console.error(`check failed: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`check passed: ${Object.keys(results).join(', ')}`);

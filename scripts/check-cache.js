/**
 * What lets `npm run check` skip work a previous passing check already did, without trusting a
 * result whose inputs changed. The type check is TypeScript's own incremental build (its build
 * info records each file's diagnostics and the shape of its exports): only the files a change
 * affects are checked again. ESLint's type-aware rules read the same types, so a file is linted
 * again when its text changed or when the type check counts it as affected (a file it imports
 * changed the shape of what it exports); every other file keeps the pass recorded for its text.
 * Both records are written only after a check that passed, so a failing run leaves the last good
 * state, and a change of the ESLint or TypeScript configuration or of the lock file starts over.
 * They live in node_modules/.cache: a fresh clone (CI) checks everything.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const CONFIG_FILES = ['eslint.config.js', 'tsconfig.json', 'package-lock.json'];
const LINTED = /\.(ts|js|mjs|cjs)$/;

function hashOf(text) {
  return createHash('sha256').update(text).digest('hex');
}

export class CheckCache {
  constructor(root) {
    this.root = root;
    this.dir = join(root, 'node_modules', '.cache', 'fencegate-check');
    this.buildInfo = join(this.dir, 'types.tsbuildinfo');
    this.lintRecord = join(this.dir, 'lint-passed.json');
    this.configKey = hashOf(
      CONFIG_FILES.map((file) => readFileSync(join(root, file), 'utf8')).join('\0'),
    );
  }

  /** The type check: the program (for ESLint), its diagnostics and the files it checked again. */
  typeCheck() {
    const configFile = ts.readConfigFile(join(this.root, 'tsconfig.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, this.root);
    const roots = new Set(parsed.fileNames);
    const options = { ...parsed.options, noEmit: true, incremental: true };
    // A configuration change starts over: the build info of another configuration says nothing.
    options.tsBuildInfoFile = `${this.buildInfo}.${this.configKey.slice(0, 16)}`;
    this.builder = ts.createIncrementalProgram({ rootNames: parsed.fileNames, options });
    const diagnostics = [
      ...parsed.errors,
      ...this.builder.getConfigFileParsingDiagnostics(),
      ...this.builder.getOptionsDiagnostics(),
      ...this.builder.getGlobalDiagnostics(),
      ...this.builder.getSyntacticDiagnostics(),
    ];
    const affected = new Set();
    for (;;) {
      const next = this.builder.getSemanticDiagnosticsOfNextAffectedFile();
      if (next === undefined) break;
      diagnostics.push(...next.result);
      const file = next.affected;
      if ('fileName' in file && roots.has(file.fileName)) affected.add(file.fileName);
    }
    return { program: this.builder.getProgram(), diagnostics, affected };
  }

  /** Files ESLint would lint (tracked or new, not ignored), each with the hash of its text. */
  async candidates(eslint) {
    const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
      cwd: this.root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const files = new Map();
    for (const relative of listed.split('\n')) {
      if (!LINTED.test(relative)) continue;
      const path = join(this.root, relative);
      if (await eslint.isPathIgnored(path)) continue;
      let text;
      try {
        text = readFileSync(path, 'utf8');
      } catch {
        continue; // deleted in the working tree
      }
      files.set(path, hashOf(text));
    }
    return files;
  }

  /** The files that must be linted: changed since their recorded pass, or affected by types. */
  toLint(files, affected) {
    const passed = this.#readLintRecord();
    return [...files].filter(([path, hash]) => passed[path] !== hash || affected.has(path));
  }

  /** After a check that passed: every candidate passed, and the type check's state is kept. */
  savePassed(files) {
    mkdirSync(this.dir, { recursive: true });
    this.builder.emit();
    const record = { configKey: this.configKey, files: Object.fromEntries(files) };
    writeFileSync(this.lintRecord, JSON.stringify(record));
  }

  #readLintRecord() {
    try {
      const record = JSON.parse(readFileSync(this.lintRecord, 'utf8'));
      return record.configKey === this.configKey ? record.files : {};
    } catch {
      return {};
    }
  }
}

/**
 * Writes test/file-durations.json, the seconds each test file took, from a vitest JSON report
 * (`npx vitest run --reporter=json --outputFile=report.json`). The test sequencer
 * (test/helpers/longest-first.ts) starts the longest files first.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const reportPath = process.argv[2];
if (reportPath === undefined) {
  console.error('usage: node scripts/file-durations.js <vitest JSON report>');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const durations = Object.fromEntries(
  report.testResults
    .map((file) => [relative(root, file.name), (file.endTime - file.startTime) / 1000])
    .sort((a, b) => b[1] - a[1])
    .map(([file, seconds]) => [file, Math.round(seconds * 10) / 10]),
);
writeFileSync(`${root}/test/file-durations.json`, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} files written to test/file-durations.json`);

/**
 * Another process holding a SQLite file's write lock: opens PATH, BEGIN IMMEDIATE, prints
 * "locked", and commits and exits when a line arrives on stdin (or stdin closes).
 */
import Database from 'better-sqlite3';

const [path] = process.argv.slice(2);
const db = new Database(path);
db.exec('BEGIN IMMEDIATE');
process.stdout.write('locked\n');
process.stdin.once('data', release).once('end', release);

function release(): void {
  db.exec('COMMIT');
  db.close();
  process.exit(0);
}

/**
 * Another process on a SQLite file, driven line by line over stdin: `lock` (BEGIN IMMEDIATE on a
 * raw connection), `unlock` (COMMIT), `abandon OPERATION_ID` (through its own store). Each command
 * answers one JSON line on stdout: `{"done": COMMAND, "result"?: …}`. An abandon behind the lock
 * answers once it got the lock; the peer keeps reading commands meanwhile. At the end of its input
 * it commits a lock it still holds and exits.
 */
import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';
import { Fencegate } from '../../src/gate.js';

const [path] = process.argv.slice(2);
const raw = new Database(path);
const gate = await Fencegate.open({ store: `sqlite:${path}` });
const answer = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.split(' ');
  if (command === 'lock') {
    raw.exec('BEGIN IMMEDIATE');
    answer({ done: 'lock' });
  } else if (command === 'unlock') {
    raw.exec('COMMIT');
    answer({ done: 'unlock' });
  } else if (command === 'abandon') {
    void gate.abandonOperation(argument!).then((result) => answer({ done: 'abandon', result }));
  }
}
if (raw.inTransaction) raw.exec('COMMIT');
raw.close();
await gate.close();

/**
 * One run appending to a session in a process of its own:
 * `tsx openai-agents-session-child.ts <json options>`. The session is a FencedSession on the
 * SQLite file `store`, claimed with a takeover, so a later run supersedes this one. It prints `open`, then waits for a line on stdin, then appends
 * its items one by one and prints one JSON line: the texts accepted, the code of the first
 * refusal, and the history it reads at the end.
 */
import { createInterface } from 'node:readline';
import { isFencegateError } from '../../src/errors.js';
import { Fencegate } from '../../src/gate.js';
import { FencedSession } from '../../src/integrations/openai-agents/index.js';
import { lines } from './openai-agents-fixture.js';

interface ChildOptions {
  store: string;
  sessionId: string;
  run: string;
  items: number;
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
const gate = await Fencegate.open({ store: options.store });
const session = await FencedSession.claim(gate, {
  sessionId: options.sessionId,
  holder: options.run,
  whenBusy: 'takeOver',
});
console.log('open');
const input = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
await input.next();

const accepted: string[] = [];
let refused: string | null = null;
for (let index = 0; index < options.items; index += 1) {
  const text = `${options.run} item ${index}`;
  try {
    await session.addItems([{ role: 'user', content: text }]);
    accepted.push(text);
  } catch (error) {
    refused ??= isFencegateError(error) ? error.code : String(error);
  }
}
const history = lines(await session.getItems());
console.log(JSON.stringify({ accepted, refused, history }));
await session.release().catch(() => undefined);
await gate.close();
process.exit(0);

// The TypeScript FencedStore's side of the cross-language memory test: reads one item of a
// thread's memory, puts it back at the revision read with `by` appended to its `writers`, and
// prints what it read as JSON.
//   node ts_memory.js URL TOKEN THREAD
import { FencegateClient } from 'fencegate/client';
import { FencedCheckpointSaver, FencedStore } from 'fencegate/langgraph';

const [url, token, threadId] = process.argv.slice(2);
const saver = new FencedCheckpointSaver({
  gate: new FencegateClient({ url, token }),
  holder: 'ts-memory',
});
const memory = new FencedStore({ saver }).forThread(threadId);
const item = await memory.get(['customer', 'prefs'], 'theme');
await memory.put(
  ['customer', 'prefs'],
  'theme',
  { ...item.value, writers: [...item.value.writers, 'typescript'] },
  { ifRevision: item.revision },
);
await saver.close();
console.log(
  JSON.stringify({ value: item.value, revision: item.revision, namespace: item.namespace }),
);

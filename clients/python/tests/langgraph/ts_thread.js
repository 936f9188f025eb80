// The TypeScript saver's side of the cross-language test: `write` puts a checkpoint (a channel
// value and a pending write) on a thread, `read` prints the thread's tip as JSON.
//   node ts_thread.js URL TOKEN THREAD write|read
import { FencegateClient } from 'fencegate/client';
import { FencedCheckpointSaver } from 'fencegate/langgraph';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';

const [url, token, threadId, mode] = process.argv.slice(2);
const saver = new FencedCheckpointSaver({
  gate: new FencegateClient({ url, token }),
  holder: 'ts-worker',
});
const config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };

if (mode === 'write') {
  const tip = await saver.getTuple(config);
  const checkpoint = emptyCheckpoint();
  checkpoint.id = uuid6(-3);
  const messages = [...(tip?.checkpoint.channel_values.messages ?? []), 'from typescript'];
  checkpoint.channel_values = { messages };
  checkpoint.channel_versions = { messages: (tip?.checkpoint.channel_versions.messages ?? 0) + 1 };
  const parent = tip ? { configurable: { ...tip.config.configurable } } : config;
  const stored = await saver.put(
    parent,
    checkpoint,
    { source: 'loop', step: 1, parents: {} },
    { messages: checkpoint.channel_versions.messages },
  );
  await saver.putWrites(stored, [['note', { said: 'typescript' }]], 'ts-task');
  await saver.close();
  console.log(JSON.stringify({ id: checkpoint.id }));
} else {
  const tip = await saver.getTuple(config);
  console.log(
    JSON.stringify({
      id: tip?.checkpoint.id,
      parent: tip?.parentConfig?.configurable?.checkpoint_id ?? null,
      values: tip?.checkpoint.channel_values,
      metadata: tip?.metadata,
      writes: tip?.pendingWrites,
    }),
  );
}

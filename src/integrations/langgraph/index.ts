/**
 * fencegate/langgraph: a LangGraph.js checkpoint saver that commits every checkpoint under a
 * fence. Needs the optional peer dependency @langchain/langgraph-checkpoint.
 */
export { FencedCheckpointSaver, type FencedCheckpointSaverOptions } from './checkpoint-saver.js';
export {
  runThread,
  ThreadBusyError,
  isThreadBusyError,
  type RunThreadOptions,
  type MultitaskStrategy,
} from './run-thread.js';

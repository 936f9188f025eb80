/**
 * fencegate/langgraph: a LangGraph.js checkpoint saver that commits every checkpoint under a
 * fence. Needs the optional peer dependency @langchain/langgraph-checkpoint.
 */
export { FencedCheckpointSaver, type FencedCheckpointSaverOptions } from './checkpoint-saver.js';
export { ThreadWriteOwner } from './thread-write-owner.js';
export {
  StaleWriteOwnerError,
  STALE_WRITE_OWNER_CODES,
  isStaleWriteOwnerError,
} from './stale-write-owner-error.js';
export {
  runThread,
  ThreadBusyError,
  isThreadBusyError,
  type RunThreadOptions,
  type RunThreadByVersionOptions,
  type MultitaskStrategy,
  type RollbackReport,
} from './run-thread.js';
export {
  stageEffect,
  awaitEffect,
  type AwaitEffectOptions,
  type EffectOutcome,
} from './node-effects.js';
export {
  FencedStore,
  type FencedStoreOptions,
  type FencedPutOperation,
  type MemoryPrecondition,
  type MemoryPutOptions,
} from './fenced-store.js';
export {
  MemoryConflictError,
  isMemoryConflictError,
  type MemoryItem,
} from './memory-conflict-error.js';

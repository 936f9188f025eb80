/**
 * fencegate/langgraph: a LangGraph.js checkpoint saver that commits every checkpoint under a
 * fence. Needs the optional peer dependency @langchain/langgraph-checkpoint.
 */
export { FencedCheckpointSaver, type FencedCheckpointSaverOptions } from './checkpoint-saver.js';

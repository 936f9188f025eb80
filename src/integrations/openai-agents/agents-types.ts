/**
 * The OpenAI Agents SDK's session types this integration implements, from @openai/agents-core
 * (an optional peer dependency, imported for its types only: nothing of it loads at run time).
 */
export type {
  AgentInputItem,
  RunContext,
  RunContextAwareSession,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents-core';

/**
 * fencegate/openai-agents: an OpenAI Agents SDK session (FencedSession) whose history only the run
 * that claimed it may write. Needs the optional peer dependency @openai/agents-core (types only
 * at run time: this module loads nothing from it).
 */
export { FencedSession, type FencedSessionOptions } from './fenced-session.js';
export type { WhenSessionBusy } from './session-claim.js';
export {
  StaleSessionOwnerError,
  SessionHistoryConflictError,
  STALE_SESSION_OWNER_CODES,
  isStaleSessionOwnerError,
  isSessionHistoryConflictError,
} from './session-errors.js';

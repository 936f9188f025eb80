/**
 * fencegate/bullmq: BullMQ processors whose runs hold the job's scope for as long as they hold
 * the job's lock, and job lifecycle events in the jobs ledger. Needs the optional peer dependency
 * bullmq (types only at run time: this module loads nothing from it).
 */
export {
  fencedProcessor,
  type FencedCommit,
  type FencedGate,
  type FencedHandler,
  type FencedJobContext,
  type FencedProcessorOptions,
} from './fenced-processor.js';
export { ledgerJobId, recordQueuedJobs, type JobLedger } from './job-ledger.js';
export {
  handBackJobId,
  isHandedBack,
  type HandBackQueue,
  type HandedBack,
} from './version-handlers.js';

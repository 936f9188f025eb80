/** The rollout the interrupted-rollout test runs in a child process and in its own. */
import type { StartRolloutRequest } from '../../src/types.js';

export const SCOPES = 3000;

export function scopeName(i: number): string {
  return `wf-${String(i).padStart(5, '0')}/memory`;
}

/** 90 % of the scopes, in three chunks or more: a kill lands between two of them. */
export const ROLLOUT: StartRolloutRequest = {
  rolloutId: 'r-sigkill',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [90],
};

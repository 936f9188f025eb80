/** The rollout the interrupted-rollout test runs in a child process and in its own. */
import type { StartRolloutRequest } from '../../src/types.js';

export function scopeName(i: number): string {
  return `wf-${String(i).padStart(5, '0')}/memory`;
}

/** 90 % of the scopes, in three chunks or more (the test sizes them): a kill lands between two. */
export const ROLLOUT: StartRolloutRequest = {
  rolloutId: 'r-sigkill',
  fromPolicy: 'v7',
  toPolicy: 'v8',
  prefix: 'wf-',
  steps: [90],
};

/** One invariant's verdict: passed with what was found, or failed with the first offenders. */
import type { InvariantResult } from './demo-types.js';

/** Offenders listed in a failed invariant's detail. */
const SHOWN = 5;

export function verdict(name: string, offenders: string[], success: string): InvariantResult {
  if (offenders.length === 0) return { name, ok: true, detail: success };
  const shown = offenders.slice(0, SHOWN).join('; ');
  const more = offenders.length > SHOWN ? `; and ${offenders.length - SHOWN} more` : '';
  return { name, ok: false, detail: `${offenders.length} failing: ${shown}${more}` };
}

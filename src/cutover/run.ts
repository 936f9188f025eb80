/**
 * The cutover loop, the same for every store: plan the cutover once (its scope list fixed then),
 * then move one chunk per transaction until none is left. Other writers run between the chunks,
 * and a cutover interrupted anywhere resumes where it stopped when it is sent again.
 */
import type { Caller } from '../core/grant-token.js';
import type { Store } from '../store/store.js';
import type { CutoverRequest, CutoverResult } from '../types.js';

export async function runCutover(
  store: Pick<Store, 'startCutover' | 'moveCutoverChunk' | 'getCutover'>,
  tenant: string,
  request: CutoverRequest & { cutoverId: string },
  caller?: Caller,
): Promise<CutoverResult> {
  await store.startCutover(tenant, request);
  while ((await store.moveCutoverChunk(tenant, request.cutoverId, caller)) > 0) {
    // Yield between chunks so requests queued behind a long cutover are served.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const record = await store.getCutover(tenant, request.cutoverId);
  if (record === null) throw new Error('a planned cutover disappeared');
  return {
    cutoverId: record.cutoverId,
    toPolicy: record.toPolicy,
    scopes: record.fences.length,
    fences: record.fences,
    skipped: record.skipped,
  };
}

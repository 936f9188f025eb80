/**
 * The answer for an operationId without a stored outcome says what docs/semantics.md says: "not
 * yet" (a commit with it may still be in flight), never that nothing happened.
 */
import { expect, it } from 'vitest';
import { startHarness } from './harness.js';

it('GET /v1/operations/:id of an absent outcome answers 404 "no outcome stored yet"', async () => {
  const harness = await startHarness();
  try {
    const response = await fetch(`${harness.url}/v1/operations/op-never-seen`, {
      headers: { authorization: `Bearer ${harness.workerToken}` },
    });
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('not_found');
    expect(body.error.message).toMatch(/no outcome stored yet/);
    expect(body.error.message).toMatch(/abandonOperation/);
    expect(body.error.message).not.toMatch(/nothing happened/);
  } finally {
    await harness.close();
  }
});

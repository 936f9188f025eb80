/**
 * Runs a fast-check property and, on failure, throws one error that carries what a reader needs:
 * the failure itself, the counterexample, and the seed and path that replay it.
 */
import fc from 'fast-check';

/** fast-check itself, for the callers that load this module only when they run. */
export { fc };

export async function assertProperty<Ts extends [unknown, ...unknown[]]>(
  property: fc.IAsyncProperty<Ts>,
  parameters: fc.Parameters<Ts>,
  replayHint: (seed: number, path: string) => string,
  title: string,
): Promise<void> {
  const details = await fc.check(property, parameters);
  if (!details.failed) return;
  const cause = details.errorInstance;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const report = fc.defaultReportMessage(details) ?? '';
  throw new Error(
    `${title}; replay with ${replayHint(details.seed, details.counterexamplePath ?? '')}\n${reason}\n${report}`,
    { cause },
  );
}

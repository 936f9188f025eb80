/**
 * fast-check is an optional peer dependency: only the property-based helpers load it, when they
 * run, so the rest of fencegate/testing imports without it.
 */
export async function loadWithFastCheck<T>(load: () => Promise<T>, feature: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isMissingFastCheck(error)) {
      throw new Error(
        `${feature} needs fast-check, an optional peer dependency of fencegate: install it with \`npm install --save-dev fast-check\``,
        { cause: error },
      );
    }
    throw error;
  }
}

function isMissingFastCheck(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' &&
    error.message.includes("'fast-check'")
  );
}

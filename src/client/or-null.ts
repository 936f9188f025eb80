/** The answer of a read, or null when the server answered that what it names does not exist. */
import { isFencegateError } from '../errors.js';

export async function orNull<T>(
  call: Promise<T>,
  code: 'scope_not_found' | 'not_found',
): Promise<T | null> {
  try {
    return await call;
  } catch (error) {
    if (isFencegateError(error) && error.code === code) return null;
    throw error;
  }
}

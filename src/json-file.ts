/** A JSON configuration file read at start: a file that cannot be read or parsed is invalid_request. */
import { readFile } from 'node:fs/promises';
import { FencegateError } from './errors.js';

/** The parsed JSON of `path`; `what` names the file in messages ("targets file"). */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new FencegateError(
      'invalid_request',
      `${what} ${path} cannot be read${typeof code === 'string' ? ` (${code})` : ''}`,
      { file: path },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new FencegateError(
      'invalid_request',
      `${what} ${path} is not valid JSON: ${error instanceof Error ? error.message : 'parse error'}`,
      { file: path },
    );
  }
}

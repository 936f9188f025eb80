/**
 * The server's pino logger: JSON lines, never a token or a value. Request logs carry method, path,
 * status and timing; the Authorization header and cookies are redacted wherever they could appear.
 * On a terminal (`npm start`) the same records are printed as readable lines by pino-pretty, one
 * line a record; when stdout is a pipe or a file, collectors get the JSON.
 */
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';

/**
 * pino-pretty is loaded only for a terminal: a server whose output is a pipe or a file (every
 * server a supervisor or a test starts) does not pay for its thirty modules at startup. An install
 * that pruned it still logs, as JSON lines.
 */
function loadPinoPretty(): typeof PinoPretty | null {
  try {
    return createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  } catch {
    return null;
  }
}

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'request.headers.authorization',
];

export function createLogger(
  level = 'info',
  destination: NodeJS.WritableStream = process.stdout,
): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  const pinoPretty = (destination as { isTTY?: boolean }).isTTY === true ? loadPinoPretty() : null;
  if (pinoPretty === null) return pino(options, destination);
  return pino(
    options,
    pinoPretty({
      destination,
      sync: true,
      colorize: destination === process.stdout && pinoPretty.isColorSupported,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      // One line a record: a request's fields spread over six lines would scroll the first-run
      // tokens out of a terminal after a few hundred requests.
      singleLine: true,
    }),
  );
}

/**
 * The server's pino logger: JSON lines, never a token or a value. Request logs carry method, path,
 * status and timing; the Authorization header is redacted wherever it could appear.
 */
import { pino, type Logger } from 'pino';

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
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}

/**
 * The dispatcher's logger: pino-shaped (fields first, then the message), so the server's pino or
 * Fastify logger can be passed as is. The dispatcher logs effect keys, targets, outcomes and error
 * texts; never payloads or header values.
 */
export interface DispatcherLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export const silentLogger: DispatcherLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

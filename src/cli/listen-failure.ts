/**
 * What `fencegate serve` says when it cannot listen: one line that names the address and what to
 * do about it, in place of the system's bare error code. The server makes its first-run tokens
 * only once it listens, so a start that fails here made none and the next start makes them.
 */
export function listenFailure(error: unknown, host: string, port: number): Error | undefined {
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'EADDRINUSE') {
    return new Error(
      `port ${port} on ${host} is already in use: stop what listens there, or choose another ` +
        'port with --port (or FENCEGATE_PORT); nothing was started',
    );
  }
  if (code === 'EADDRNOTAVAIL') {
    return new Error(
      `${host} is not an address of this machine: choose one with --host (or FENCEGATE_HOST); ` +
        'nothing was started',
    );
  }
  return undefined;
}

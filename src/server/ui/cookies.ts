/** The session cookie: read from the Cookie header, written with the attributes that keep it safe. */
import { SESSION_COOKIE } from './sessions.js';

export function readSessionCookie(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=');
  }
  return undefined;
}

/**
 * HttpOnly: no script reads it. SameSite=Strict: no other site's page sends it. Path=/ui: only the
 * dashboard receives it. Secure when the request came over TLS.
 */
export function sessionCookie(id: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${id}`,
    'Path=/ui',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${maxAgeSeconds}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(secure: boolean): string {
  return sessionCookie('', 0, secure);
}

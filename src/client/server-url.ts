/**
 * What a client may be pointed at: the base URL of a fencegate server over http or https, with
 * no user or password (a client authenticates with its token), query or fragment. The rule is
 * shared by the clients and the CLI; its messages never repeat the URL, which may hold a password.
 */

export const EXAMPLE_SERVER_URL = 'http://127.0.0.1:7420';

/** Why `text` is not a server's base URL, as a phrase to follow "<where it came from> ", or null. */
export function serverUrlProblem(text: string): string | null {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || !['http:', 'https:'].includes(url.protocol)) {
    return `must be an http:// or https:// URL of the server, such as ${EXAMPLE_SERVER_URL}`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'must not hold a user or password (user:password@): the server is called with a token; remove them from the URL';
  }
  if (url.search !== '' || url.hash !== '') {
    return `must be the server's base URL, without a query or fragment, such as ${EXAMPLE_SERVER_URL}`;
  }
  return null;
}

/** The base URL without trailing slashes; a TypeError that says what to fix when it is not one. */
export function serverBaseUrl(text: string): string {
  const problem = serverUrlProblem(text);
  if (problem !== null) throw new TypeError(`the client's url ${problem}`);
  return text.replace(/\/+$/, '');
}

/** `send(method, path, body?)`: a fetch of one server with a bearer token, JSON when a body is given. */
export function bearerFetch(
  url: () => string,
  token: () => string,
): (method: string, path: string, body?: unknown) => Promise<Response> {
  return (method, path, body) =>
    fetch(`${url()}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

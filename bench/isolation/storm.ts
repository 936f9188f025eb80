/**
 * The storm of the tenant-isolation benchmark, in a process of its own: stale-fence commits of the
 * storm tenant on 64 connections, as fast as the server answers. Says `ready` over IPC once loaded,
 * starts on `go`, answers its LoadResult and exits.
 */
import { runLoad } from '../http/load.js';

const [url = '', token = '', scopes = '64', connections = '64', seconds = '5'] =
  process.argv.slice(2);

process.once('message', () => {
  let k = 0;
  void runLoad(
    url,
    {
      method: 'POST',
      path: '/v1/commit',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      // The storm's scopes moved on past fence 1: each of its commits is stale.
      body: () => {
        k += 1;
        return JSON.stringify({
          scope: `iso/${k % Number(scopes)}`,
          fence: 1,
          operationId: `storm-${k}`,
          writes: [{ name: 'x', expectRevision: 0, value: k }],
        });
      },
    },
    { connections: Number(connections), seconds: Number(seconds) },
  ).then((result) => process.send?.(result, () => process.exit(0)));
});
process.send?.('ready');

/**
 * The reference a user would write by hand: bare Fastify (its default logger and JSON-schema
 * validation) in front of one guarded SQLite transaction per request — idempotency lookup, fence
 * check, compare-and-set of the record, audit row, idempotency row — on a WAL file with the same
 * settings as fencegate's store, and a constant bearer token.
 */
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';

interface CommitBody {
  scope: string;
  fence: number;
  operationId: string;
  writes: { name: string; expectRevision: number; value: unknown }[];
}

const SCHEMA = `
  CREATE TABLE scopes (scope TEXT PRIMARY KEY, fence INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE records (scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT, revision INTEGER NOT NULL,
    PRIMARY KEY (scope, name)) WITHOUT ROWID;
  CREATE TABLE operations (operation_id TEXT PRIMARY KEY, outcome TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE audit (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, scope TEXT, operation_id TEXT,
    outcome TEXT NOT NULL, records TEXT);
`;

export function buildBareServer(
  path: string,
  token: string,
  scopes: readonly string[],
): FastifyInstance {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 10000');
  db.exec(SCHEMA);
  const addScope = db.prepare('INSERT INTO scopes (scope, fence) VALUES (?, 1)');
  for (const scope of scopes) addScope.run(scope);

  const findOperation = db.prepare('SELECT outcome FROM operations WHERE operation_id = ?');
  const readFence = db.prepare('SELECT fence FROM scopes WHERE scope = ?').pluck();
  const insertRecord = db.prepare(
    'INSERT INTO records (scope, name, value, revision) VALUES (?, ?, ?, 1) ON CONFLICT DO NOTHING',
  );
  const updateRecord = db.prepare(
    'UPDATE records SET value = ?, revision = revision + 1 WHERE scope = ? AND name = ? AND revision = ?',
  );
  const addAudit = db.prepare(
    'INSERT INTO audit (at, scope, operation_id, outcome, records) VALUES (?, ?, ?, ?, ?)',
  );
  const addOperation = db.prepare('INSERT INTO operations (operation_id, outcome) VALUES (?, ?)');

  const commit = db.transaction((body: CommitBody): { status: number; outcome: string } => {
    const stored = findOperation.get(body.operationId) as { outcome: string } | undefined;
    if (stored !== undefined) return { status: 200, outcome: stored.outcome };
    let outcome: string;
    if (readFence.get(body.scope) !== body.fence) {
      outcome = JSON.stringify({ outcome: 'rejected', code: 'stale_fence' });
    } else {
      let applied = true;
      for (const write of body.writes) {
        const value = JSON.stringify(write.value);
        const changes =
          write.expectRevision === 0
            ? insertRecord.run(body.scope, write.name, value).changes
            : updateRecord.run(value, body.scope, write.name, write.expectRevision).changes;
        if (changes !== 1) applied = false;
      }
      outcome = JSON.stringify(
        applied ? { outcome: 'committed' } : { outcome: 'rejected', code: 'stale_revision' },
      );
    }
    addAudit.run(Date.now(), body.scope, body.operationId, outcome, JSON.stringify(body.writes));
    addOperation.run(body.operationId, outcome);
    return { status: outcome.includes('committed') ? 200 : 409, outcome };
  });

  const app = Fastify({ logger: true });
  const expected = `Bearer ${token}`;
  app.addHook('onRequest', async (request, reply) => {
    if (request.url !== '/healthz' && request.headers.authorization !== expected) {
      await reply.code(401).send({ error: 'unauthorized' });
    }
  });
  app.get('/healthz', () => ({ ok: true }));
  app.post(
    '/v1/commit',
    {
      schema: {
        body: {
          type: 'object',
          required: ['scope', 'fence', 'operationId', 'writes'],
          properties: {
            scope: { type: 'string', maxLength: 256 },
            fence: { type: 'integer', minimum: 1 },
            operationId: { type: 'string', maxLength: 256 },
            writes: {
              type: 'array',
              maxItems: 64,
              items: {
                type: 'object',
                required: ['name', 'expectRevision', 'value'],
                properties: {
                  name: { type: 'string', maxLength: 256 },
                  expectRevision: { type: 'integer', minimum: 0 },
                  value: {},
                },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { status, outcome } = commit(request.body as CommitBody);
      return reply.code(status).type('application/json').send(outcome);
    },
  );
  app.addHook('onClose', () => db.close());
  return app;
}

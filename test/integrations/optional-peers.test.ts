/**
 * BullMQ, LangGraph, the OpenAI Agents SDK and the PostgreSQL and etcd drivers are optional
 * peers, and ioredis (BullMQ's usual connection) is not a dependency at all: importing fencegate
 * (or its client, server, store registry, testing kit and the OpenAI Agents session, which takes
 * only the SDK's types) must load none of them. A child process refuses to resolve them; the
 * postgres and langgraph entry points, which do need their peers, show that the refusal works.
 * Runs against dist/ like a user would.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
/** Module hooks for the child: resolving an optional peer dependency fails loudly. */
const DENY_PEERS = `
  export async function resolve(specifier, context, next) {
    if (/^(bullmq|ioredis|@langchain\\/|@openai\\/|openai$|pg$|pg\\/|etcd3|@grpc\\/)/.test(specifier)) {
      throw new Error('optional peer loaded: ' + specifier);
    }
    return next(specifier, context);
  }`;
const hooks = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module';
   register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(DENY_PEERS)}`)});`,
)}`;

async function importWithoutPeers(entry: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      hooks,
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).length);`,
    ],
    { cwd: new URL('../../', import.meta.url).pathname },
  );
  return stdout.trim();
}

describe('optional peer dependencies', () => {
  for (const entry of [
    'fencegate',
    'fencegate/client',
    'fencegate/server',
    'fencegate/store',
    'fencegate/audit',
    'fencegate/dispatch',
    'fencegate/testing',
    'fencegate/bullmq',
    'fencegate/openai-agents',
  ]) {
    it(`importing ${entry} loads none of bullmq, ioredis, @langchain, @openai, pg, etcd3 and @grpc`, async () => {
      expect(Number(await importWithoutPeers(entry))).toBeGreaterThan(0);
    });
  }

  it('the refusal is real: fencegate/postgres needs pg and fails without it', async () => {
    await expect(importWithoutPeers('fencegate/postgres')).rejects.toThrow(
      /optional peer loaded: pg/,
    );
  });

  it('the refusal is real: fencegate/langgraph needs its peer and fails without it', async () => {
    await expect(importWithoutPeers('fencegate/langgraph')).rejects.toThrow(
      /optional peer loaded: @langchain\//,
    );
  });
});

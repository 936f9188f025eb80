/**
 * `fencegate serve`: runs the HTTP server (and, with --dispatch, the dispatchers) until SIGTERM or
 * SIGINT, then stops the dispatchers, lets in-flight requests finish and closes the store.
 */
import type { TenantRateLimit } from '../server/tenant-rate-limit.js';
import { DEFAULT_POLL_INTERVAL_MS, MAX_POLL_INTERVAL_MS } from '../dispatch/dispatcher.js';
import { requireTenant } from '../core/validate.js';
import { DEFAULT_STORE_URL, redactUrl } from '../store/open.js';
import type {
  FirstRunTokens,
  RunningDispatch,
  ServeDispatchOptions,
} from '../server/start-server.js';
import { parseOutcomeWindow } from '../retention/duration.js';
import { loadRolloutConfig } from '../rollout/driver-config.js';
import { sourcesOpenToEveryTenant } from '../rollout/metric-sources.js';
import { ManualClock } from '../testing/manual-clock.js';
import { CLI_COMMAND } from '../server/cli-command.js';
import { storeArgument } from './cli-store.js';
import { loadStoreModules, STORE_MODULE_FLAG, storeModuleUsage } from './store-modules.js';
import { listenFailure } from './listen-failure.js';
import { SecretFile, UnsafeSecretFile } from './secret-file.js';
import { storeKindsUsage } from './store-kinds-usage.js';
import {
  EXIT_OK,
  stringOption,
  UsageError,
  type CliIo,
  type Command,
  type FlagValues,
} from './command.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 7420;
const MIN_ADMIN_TOKEN_LENGTH = 16;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

const USAGE = `Usage: fencegate serve [--store URL] [--host HOST] [--port PORT] [--store-module M ...]
                       [--dispatch --targets FILE [--dispatch-tenant T ...] [--dispatch-poll-ms MS]]
                       [--tenant-rate N [--tenant-burst N]]

Runs the fencegate HTTP API. Prints "fencegate listening on http://HOST:PORT" once it
accepts requests; exits cleanly on SIGTERM or SIGINT after in-flight requests finish.

Options:
  --store URL           the store (env FENCEGATE_STORE, default ${DEFAULT_STORE_URL}), one of:
${storeKindsUsage('                          ')}
                          or a URL of a kind a --store-module registers
${storeModuleUsage(24)}
  --host HOST           address to listen on                           (env FENCEGATE_HOST, default ${DEFAULT_HOST})
  --port PORT           port to listen on, 0 for any free port         (env FENCEGATE_PORT, default ${DEFAULT_PORT})
  --dispatch            also run the dispatcher in this process: it delivers committed intents
                        to the targets of --targets, with the effectKey as Idempotency-Key
  --targets FILE        the delivery targets, the only URLs the dispatcher calls (needed by --dispatch):
                          {"targets": {"crm-webhook": {"type": "webhook",
                                       "url": "http://127.0.0.1:9000/hook", "timeoutMs": 5000,
                                       "tenants": ["acme"]}}}
                        a target's "tenants" lists who may use it (default: every tenant)
  --dispatch-tenant T   only dispatch the intents of this tenant; repeat for several
                        (default: every tenant, including tenants created later)
  --dispatch-poll-ms MS the dispatchers' poll, the safety net for what no commit wakes them for
                        (backoff come due, lapsed claims), 1 to 3600000 (default ${DEFAULT_POLL_INTERVAL_MS})
  --tenant-rate N       at most N requests a second per tenant (a batch of commits counts each);
                        past it a request is answered 429 rate_limited with Retry-After, before
                        any store work (default: no limit)
  --tenant-burst N      how many a tenant may send at once after being idle (default: N of --tenant-rate)
  --keep-outcomes D     delete stored commit outcomes older than D (7d, 12h; at least 1h), hourly;
                        a later repeat of such an operationId is a new operation
  --first-run-tokens-file PATH
                        where a first run writes its admin and operator tokens (created with
                        mode 0600); without it they are printed only when stdout is a terminal,
                        and otherwise only their ids are
  --rollouts FILE       the rollout driver's configuration: whether this server drives rollouts
                        with holds (default: it does), its lease and the named metric sources
                        gates may read (the only URLs it calls for them) and the tenants whose
                        rollouts may read each (absent: every tenant, with a warning at start):
                          {"driver": true, "leaseMs": 15000, "intervalMs": 1000,
                           "metricSources": {"errors": {"url": "http://127.0.0.1:9100/errors",
                                                        "tenants": ["acme"]}}}
  --trust-proxy         the server is reached through a proxy that terminates TLS: honour its
                        X-Forwarded-Proto, so the dashboard's cookie is Secure over https
                        (without it the header is ignored: any client could send it)
  --metrics-rollout-names
                        label the rollout gauges of /metrics with tenant and rollout id; /metrics
                        needs no token, so without it each rollout is labelled by a pseudonym
  -h, --help            show this help

Environment:
  FENCEGATE_ADMIN_TOKEN   the admin token (at least ${MIN_ADMIN_TOKEN_LENGTH} characters); it only manages tokens.
                          Without it, a store that never had tokens gets a first-run admin
                          token and an operator token for tenant "dev", once per store, ever;
                          they are shown once (see --first-run-tokens-file).
  FENCEGATE_LOG_LEVEL     ${LOG_LEVELS.join(', ')} (default info); logs are JSON lines on stdout,
                          readable lines when stdout is a terminal.
`;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the HTTP API',
  usage: USAGE,
  flags: {
    store: { type: 'string' },
    ...STORE_MODULE_FLAG,
    host: { type: 'string' },
    port: { type: 'string' },
    dispatch: { type: 'boolean' },
    targets: { type: 'string' },
    'dispatch-tenant': { type: 'string', multiple: true },
    'dispatch-poll-ms': { type: 'string' },
    'keep-outcomes': { type: 'string' },
    'trust-proxy': { type: 'boolean' },
    'metrics-rollout-names': { type: 'boolean' },
    rollouts: { type: 'string' },
    'first-run-tokens-file': { type: 'string' },
    'tenant-rate': { type: 'string' },
    'tenant-burst': { type: 'string' },
  },
  run: serve,
};

async function serve(flags: FlagValues, io: CliIo): Promise<number> {
  const store = stringOption(flags, 'store', io.env, 'FENCEGATE_STORE', DEFAULT_STORE_URL);
  const host = stringOption(flags, 'host', io.env, 'FENCEGATE_HOST', DEFAULT_HOST);
  const port = parsePort(
    stringOption(flags, 'port', io.env, 'FENCEGATE_PORT', String(DEFAULT_PORT)),
  );
  const adminToken = adminTokenFrom(io.env);
  const level = io.env.FENCEGATE_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(level)) {
    throw new UsageError(`FENCEGATE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const testClock = testClockFrom(io);
  const dispatch = dispatchFrom(flags);
  const tokensFile = firstRunTokensFile(flags);
  const tenantRateLimit = tenantRateFrom(flags);
  const keepOutcomes = flags['keep-outcomes'];
  const keepOutcomesMs =
    typeof keepOutcomes === 'string'
      ? outcomeWindowFlag('--keep-outcomes', keepOutcomes)
      : undefined;

  await loadStoreModules(flags, io, store);
  // A bad rollout configuration is refused before anything is opened or bound.
  const rollouts =
    typeof flags.rollouts === 'string' ? await loadRolloutConfig(flags.rollouts) : undefined;
  // Before the server starts: the first-run tokens it may make must have somewhere to go.
  const secretFile = tokensFile === undefined ? undefined : await openTokensFile(tokensFile);
  // Loaded here, not with the CLI: every other command would pay for the HTTP server's start-up.
  const [{ startServer }, { createLogger }] = await Promise.all([
    import('../server/start-server.js'),
    import('../server/logger.js'),
  ]);
  const running = await startServer({
    store,
    host,
    port,
    logger: createLogger(level),
    ...(adminToken === undefined ? {} : { adminToken }),
    ...(testClock === undefined ? {} : { testClock }),
    ...(dispatch === undefined ? {} : { dispatch }),
    ...(keepOutcomesMs === undefined ? {} : { keepOutcomesMs }),
    trustProxy: flags['trust-proxy'] === true,
    metricsRolloutNames: flags['metrics-rollout-names'] === true,
    ...(rollouts === undefined ? {} : { rollouts }),
    ...(tenantRateLimit === undefined ? {} : { tenantRateLimit }),
  }).catch(async (error: unknown) => {
    await secretFile?.discard();
    throw listenFailure(error, host, port) ?? error;
  });
  try {
    if (running.firstRun !== null) {
      await showFirstRunTokens(running.firstRun, running.url, store, secretFile, io);
    } else {
      await secretFile?.discard();
    }
  } catch (error) {
    // A server that will never print its startup line must not go on listening.
    await running.close();
    throw error;
  }
  if (running.dispatch !== null) io.stdout(dispatchText(running.dispatch));
  for (const target of running.dispatch?.openToEveryTenant ?? []) {
    io.stderr(
      `fencegate: warning: target ${target} has no "tenants" list: intents of every tenant may use it\n`,
    );
  }
  for (const source of sourcesOpenToEveryTenant(rollouts?.metricSources ?? {})) {
    io.stderr(
      `fencegate: warning: metric source ${source} has no "tenants" list: rollouts of every tenant may read it\n`,
    );
  }
  // Signals are caught before the last startup line: whoever reads it may stop the server at once.
  const signalled = waitForSignal(io);
  // The last startup line: once it is printed, requests are accepted and dispatchers run.
  io.stdout(`fencegate listening on ${running.url}\n`);

  await signalled;
  await running.close();
  io.stderr(`fencegate: stopped; store ${redactUrl(store)} closed\n`);
  return EXIT_OK;
}

/** --dispatch, --targets, --dispatch-tenant and --dispatch-poll-ms, checked together. */
function dispatchFrom(flags: FlagValues): ServeDispatchOptions | undefined {
  const targets = flags.targets;
  const tenants = dispatchTenants(flags);
  const poll = flags['dispatch-poll-ms'];
  if (flags.dispatch !== true) {
    if (typeof targets === 'string' || tenants !== undefined) {
      throw new UsageError('--targets and --dispatch-tenant need --dispatch');
    }
    if (poll !== undefined) throw new UsageError('--dispatch-poll-ms needs --dispatch');
    return undefined;
  }
  if (typeof targets !== 'string' || targets === '') {
    throw new UsageError('--dispatch needs --targets FILE, the delivery targets');
  }
  const options: ServeDispatchOptions = { targetsFile: targets };
  if (typeof poll === 'string') options.tuning = { pollIntervalMs: parsePollMs(poll) };
  if (tenants === undefined) return options;
  for (const tenant of tenants) {
    try {
      requireTenant(tenant, '--dispatch-tenant');
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  }
  return { ...options, tenants: [...new Set(tenants)] };
}

function parsePollMs(text: string): number {
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > MAX_POLL_INTERVAL_MS) {
    throw new UsageError(
      `--dispatch-poll-ms must be an integer from 1 to ${MAX_POLL_INTERVAL_MS}, not "${text}"`,
    );
  }
  return Number(text);
}

function dispatchTenants(flags: FlagValues): string[] | undefined {
  const value = flags['dispatch-tenant'];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value : [value]).map(String);
}

/** --tenant-rate and --tenant-burst: positive integers; a burst needs a rate. */
function tenantRateFrom(flags: FlagValues): TenantRateLimit | undefined {
  const rate = flags['tenant-rate'];
  const burst = flags['tenant-burst'];
  if (typeof rate !== 'string') {
    if (typeof burst === 'string') throw new UsageError('--tenant-burst needs --tenant-rate');
    return undefined;
  }
  const perSecond = positiveCount('--tenant-rate', rate);
  return typeof burst === 'string'
    ? { perSecond, burst: positiveCount('--tenant-burst', burst) }
    : { perSecond };
}

function positiveCount(flag: string, text: string): number {
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1) {
    throw new UsageError(`${flag} must be an integer from 1 to 9999999, not "${text}"`);
  }
  return Number(text);
}

function parsePort(text: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, not "${text}"`);
  }
  return Number(text);
}

function adminTokenFrom(env: Record<string, string | undefined>): string | undefined {
  const token = env.FENCEGATE_ADMIN_TOKEN;
  if (token === undefined || token === '') return undefined;
  if (token.length < MIN_ADMIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new UsageError(
      `FENCEGATE_ADMIN_TOKEN must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters without spaces`,
    );
  }
  return token;
}

/** FENCEGATE_TEST_CLOCK=manual: a test server whose store time moves only by POST /v1/test/clock. */
function testClockFrom(io: CliIo): ManualClock | undefined {
  const mode = io.env.FENCEGATE_TEST_CLOCK;
  if (mode === undefined || mode === '') return undefined;
  if (mode !== 'manual') throw new UsageError('FENCEGATE_TEST_CLOCK may only be "manual"');
  io.stderr(
    'fencegate: FENCEGATE_TEST_CLOCK=manual -- store time moves only by POST /v1/test/clock. For tests only.\n',
  );
  return new ManualClock();
}

function dispatchText(dispatch: RunningDispatch): string {
  const targets = dispatch.targets.join(', ');
  if (dispatch.tenants === 'every') {
    return `fencegate dispatching intents of every tenant to ${targets}\n`;
  }
  return dispatch.tenants
    .map((tenant) => `fencegate dispatching intents of tenant ${tenant} to ${targets}\n`)
    .join('');
}

function firstRunTokensFile(flags: FlagValues): string | undefined {
  const path = flags['first-run-tokens-file'];
  if (path === undefined) return undefined;
  if (typeof path !== 'string' || path === '') {
    throw new UsageError('--first-run-tokens-file needs a file path');
  }
  return path;
}

/**
 * The first run's secrets go to a terminal or to the file the operator named, never to a log
 * stream: when stdout is not a terminal it gets only the tokens' ids and how to make new ones.
 */
export async function showFirstRunTokens(
  tokens: FirstRunTokens,
  url: string,
  store: string,
  file: SecretFile | undefined,
  io: CliIo,
): Promise<void> {
  // The token commands print their store: without it they would act on ./fencegate.db.
  const token = `${CLI_COMMAND} token`;
  const onStore = ` ${storeArgument(redactUrl(store))}`;
  const password = redactUrl(store) === store ? '' : '(with the store password in place of ***)';
  const hints: FirstRunHints = { token, onStore, password };
  if (file !== undefined) {
    await file.write(firstRunText(tokens, url, hints));
    io.stdout(
      firstRunIdsText(tokens, `They are in ${file.path} (readable by this user only).`, hints),
    );
  } else if (io.stdoutIsTTY === true) {
    io.stdout(firstRunText(tokens, url, hints));
  } else {
    io.stdout(
      firstRunIdsText(
        tokens,
        'Their secrets are shown only on a terminal or in --first-run-tokens-file, so not here.',
        hints,
      ),
    );
  }
}

/** The token command, the store argument of the server's store, and a note on its password. */
interface FirstRunHints {
  token: string;
  onStore: string;
  password: string;
}

/** The --first-run-tokens-file, opened; a path that cannot be written ends the start here. */
async function openTokensFile(path: string): Promise<SecretFile> {
  try {
    return await SecretFile.open(path);
  } catch (error) {
    if (error instanceof UnsafeSecretFile)
      throw new Error(`--first-run-tokens-file ${error.message}; nothing was started`);
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    throw new Error(
      `--first-run-tokens-file ${path} cannot be written (${code}): name a file this user may ` +
        'write; nothing was started',
    );
  }
}

function firstRunIdsText(tokens: FirstRunTokens, where: string, hints: FirstRunHints): string {
  const { token, onStore, password } = hints;
  return [
    '',
    'fencegate first run: this store had no tokens, so two were created, once for this store.',
    where,
    '',
    `  admin token id:                         ${tokens.adminTokenId}`,
    `  operator token id, tenant "${tokens.operatorTenant}":        ${tokens.operatorTokenId}`,
    '',
    'For a token to use here, create one with access to the store:',
    `  ${token} create --tenant ${tokens.operatorTenant} --role operator${onStore}`,
    `which prints a new token, and revoke these with:`,
    `  ${token} revoke ID${onStore}`,
    ...(password === '' ? [] : [password]),
    '',
    '',
  ].join('\n');
}

function firstRunText(tokens: FirstRunTokens, url: string, hints: FirstRunHints): string {
  const { token, onStore, password } = hints;
  return [
    '',
    'fencegate first run: this store had no tokens, so two were created.',
    'They are shown only this once and stored hashed; copy them now.',
    '',
    `  admin token (manages tokens only):   ${tokens.adminToken}`,
    `  operator token, tenant "${tokens.operatorTenant}":        ${tokens.operatorToken}`,
    '',
    `Their ids are ${tokens.adminTokenId} (admin) and ${tokens.operatorTokenId} (operator);`,
    'revoke one with, and list them with:',
    `  ${token} revoke ID${onStore}`,
    `  ${token} list${onStore}`,
    ...(password === '' ? [] : [password]),
    '',
    'Try:',
    `  curl -s -H "Authorization: Bearer ${tokens.operatorToken}" ${url}/v1/scopes`,
    `Dashboard: ${url}/ui (sign in with the operator token)`,
    '',
    '',
  ].join('\n');
}

/** Resolves on the first SIGTERM or SIGINT; a second one exits at once. */
function waitForSignal(io: CliIo): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      io.stderr(`fencegate: ${signal} received; finishing in-flight requests\n`);
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      const force = (again: NodeJS.Signals) => {
        io.stderr(`fencegate: ${again} received again; exiting without waiting\n`);
        process.exit(1);
      };
      process.once('SIGTERM', force);
      process.once('SIGINT', force);
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

function outcomeWindowFlag(flag: string, text: string): number {
  try {
    return parseOutcomeWindow(text);
  } catch (error) {
    throw new UsageError(`${flag}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

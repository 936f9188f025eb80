/**
 * Dispatch for many tenants in one process (`fencegate serve --dispatch`): one dispatcher per
 * tenant, each bound to its tenant so claims and completions stay inside it. With a fixed list of
 * tenants they all run from the start. Without one, every tenant is served: the store is asked
 * every `discoverIntervalMs` which tenants have intents to deliver, a dispatcher is started for
 * each new one (tenants created after start included) and stopped once its tenant has none left.
 */
import { describe } from './attempt.js';
import type { DispatcherLogger } from './logger.js';
import type { RunningDispatcher } from './start-from-targets.js';

export interface TenantDispatchOptions {
  /** Starts the dispatcher of one tenant. */
  startTenant(tenant: string): Promise<RunningDispatcher>;
  /** The tenants with intents to deliver or reconcile (Store.listTenantsWithOpenIntents). */
  openTenants(): Promise<string[]>;
  /** Only these tenants, all the time; every tenant (discovered) when absent. */
  tenants?: readonly string[];
  /** How often tenants are discovered. Default 1000. */
  discoverIntervalMs?: number;
  logger: DispatcherLogger;
}

export const DEFAULT_DISCOVER_INTERVAL_MS = 1000;

export class TenantDispatch {
  readonly #options: TenantDispatchOptions;
  readonly #running = new Map<string, RunningDispatcher>();
  #timer: NodeJS.Timeout | null = null;
  #round: Promise<void> = Promise.resolve();
  #stopped = false;

  private constructor(options: TenantDispatchOptions) {
    this.#options = options;
  }

  /** Starts the fixed tenants' dispatchers, or the first discovery round. */
  static async start(options: TenantDispatchOptions): Promise<TenantDispatch> {
    const dispatch = new TenantDispatch(options);
    if (options.tenants !== undefined) {
      try {
        for (const tenant of options.tenants) await dispatch.#startTenant(tenant);
      } catch (error) {
        await dispatch.stop();
        throw error;
      }
      return dispatch;
    }
    // A store that cannot answer now is retried by the next round; it does not stop the server.
    await dispatch.#discover();
    dispatch.#schedule();
    return dispatch;
  }

  /** The dispatchers running now, by tenant. */
  get dispatchers(): ReadonlyMap<string, RunningDispatcher> {
    return this.#running;
  }

  /** Stops discovering and every dispatcher (in-flight deliveries are recorded first). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#round;
    await Promise.all([...this.#running.values()].map((running) => running.stop()));
    this.#running.clear();
  }

  #schedule(): void {
    if (this.#stopped) return;
    const interval = this.#options.discoverIntervalMs ?? DEFAULT_DISCOVER_INTERVAL_MS;
    this.#timer = setTimeout(() => {
      this.#round = this.#discover().finally(() => this.#schedule());
    }, interval);
    this.#timer.unref();
  }

  async #discover(): Promise<void> {
    let open: string[];
    try {
      open = await this.#options.openTenants();
    } catch (error) {
      this.#options.logger.error(
        { error: describe(error) },
        'finding tenants with intents failed; retrying',
      );
      return;
    }
    const wanted = new Set(open);
    for (const [tenant, running] of this.#running) {
      if (wanted.has(tenant)) continue;
      // Nothing pending, claimed or unknown: its dispatcher is idle; the next intent restarts it.
      this.#running.delete(tenant);
      await running.stop();
    }
    for (const tenant of open) {
      if (this.#stopped) return;
      if (this.#running.has(tenant)) continue;
      try {
        await this.#startTenant(tenant);
      } catch (error) {
        this.#options.logger.error(
          { tenant, error: describe(error) },
          'starting the dispatcher of a tenant failed; retrying',
        );
      }
    }
  }

  async #startTenant(tenant: string): Promise<void> {
    this.#running.set(tenant, await this.#options.startTenant(tenant));
  }
}

/**
 * The etcd client with deadlines. Every call carries a deadline of `callTimeoutMs` per attempt;
 * the client tries another member on a transport error (a killed or frozen member), and a member
 * that failed three calls in a row is skipped for a few seconds. The whole call is also bounded by
 * `operationTimeoutMs`, below the HTTP client's own timeout, so nothing hangs.
 *
 * Reads are etcd's default linearizable reads, never serializable ones.
 *
 * Every call asks for a member that has a leader (etcd's `hasleader` metadata, what the Go client's
 * WithRequireLeader sends): a member that lost its leader refuses the call at once with
 * `no leader`, before anything is proposed, instead of holding it until its deadline. That keeps a
 * write refused during quorum loss certainly not applied (store_unavailable), and a read failing
 * fast.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Etcd3 } from 'etcd3';
import type { IRangeRequest, IRangeResponse, ITxnRequest, ITxnResponse } from 'etcd3';
import { attemptsPolicy } from './etcd-call-policy.js';
import { memberPolicy } from './etcd-member-policy.js';
import { classifyEtcdError, outcomeUnknown, storeUnavailable, tooLarge } from './etcd-errors.js';

/** etcd's require-leader metadata (rpctypes.MetadataRequireLeaderKey = MetadataHasLeader). */
const requireLeader: Interceptor = (options, nextCall) =>
  new InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      metadata.set('hasleader', 'true');
      next(metadata, listener);
    },
  });

export interface EtcdConnectionOptions {
  hosts: string[];
  callTimeoutMs: number;
  operationTimeoutMs: number;
}

export class EtcdConnection {
  readonly client: Etcd3;
  /** host:port list for messages. */
  readonly target: string;
  readonly #operationTimeoutMs: number;
  #closed = false;

  constructor(options: EtcdConnectionOptions) {
    this.target = options.hosts.join(',');
    this.#operationTimeoutMs = options.operationTimeoutMs;
    this.client = new Etcd3({
      hosts: options.hosts.map((host) => `http://${host}`),
      dialTimeout: options.callTimeoutMs,
      // A page of rows may hold many values of up to 256 KiB each.
      grpcOptions: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
      faultHandling: { host: memberPolicy(1_000, options.hosts.length), global: attemptsPolicy() },
      defaultCallOptions: (context) =>
        context.isStream
          ? {}
          : { deadline: Date.now() + options.callTimeoutMs, interceptors: [requireLeader] },
    });
  }

  /** A linearizable read; store_unavailable when it cannot be served in time. */
  async range(request: IRangeRequest): Promise<IRangeResponse> {
    try {
      return await this.#bounded(this.client.kv.range(request));
    } catch (error) {
      throw this.#readError(error);
    }
  }

  /** A read-only Txn (several ranges at one revision). */
  async readTxn(request: ITxnRequest): Promise<ITxnResponse> {
    try {
      return await this.#bounded(this.client.kv.txn(request));
    } catch (error) {
      throw this.#readError(error);
    }
  }

  /**
   * A write Txn. Errors are classified, not thrown as driver errors: the caller decides whether
   * to send the same Txn again (its compares make a second apply impossible).
   */
  async writeTxn(
    request: ITxnRequest,
  ): Promise<{ ok: true; response: ITxnResponse } | { ok: false; error: unknown }> {
    if (this.#closed) return { ok: false, error: new Error('the store is already closed') };
    try {
      return { ok: true, response: await this.#bounded(this.client.kv.txn(request)) };
    } catch (error) {
      return { ok: false, error };
    }
  }

  writeError(error: unknown, operationId: string | undefined): Error {
    switch (classifyEtcdError(error)) {
      case 'too_large':
        return tooLarge('etcd refused its size or number of operations');
      case 'not_sent':
        return storeUnavailable(this.target, error);
      case 'in_doubt':
        return outcomeUnknown(this.target, error, operationId);
    }
  }

  #readError(error: unknown): Error {
    if (classifyEtcdError(error) === 'too_large') return tooLarge('etcd refused its size');
    return storeUnavailable(this.target, error);
  }

  #bounded<T>(call: Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the store is already closed'));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`deadline of ${this.#operationTimeoutMs} ms exceeded`)),
        this.#operationTimeoutMs,
      );
    });
    // A call that outlives the deadline still settles; its result is dropped.
    call.catch(() => undefined);
    return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.client.close();
  }
}

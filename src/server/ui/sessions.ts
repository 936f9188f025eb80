/**
 * Dashboard sessions: a random id in an HttpOnly, SameSite=Strict cookie stands for one operator
 * token of one tenant. The token itself is never kept, only its hash, which is looked up in the
 * store on every request: a token deleted anywhere (the admin endpoint, the CLI, another server
 * on the same store) ends its sessions at the next request. Sessions live in this process: a
 * restart signs everyone out.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../../store/store.js';

export const SESSION_COOKIE = 'fencegate_session';
/** A session ends this long after sign-in, whatever happens. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** The oldest sessions are dropped beyond this many. */
const MAX_SESSIONS = 10_000;

export interface Session {
  tenant: string;
  tokenId: string;
  /** sha256 of the operator token, as the store keeps it. */
  tokenHash: string;
  expiresAt: number;
}

function digest(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}

export class DashboardSessions {
  /** By the digest of the session id, so the map never holds a usable cookie. */
  readonly #sessions = new Map<string, Session>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Returns the new session id, for the cookie. */
  open(session: Omit<Session, 'expiresAt'>): string {
    const id = randomBytes(32).toString('base64url');
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next();
      if (oldest.done !== true) this.#sessions.delete(oldest.value);
    }
    this.#sessions.set(digest(id), { ...session, expiresAt: this.now() + SESSION_TTL_MS });
    return id;
  }

  /**
   * The live session of this id, or null: unknown, expired, or its token no longer exists or no
   * longer belongs to the same tenant as an operator token. Throws store_unavailable when the
   * store cannot say (fail closed: no page is shown).
   */
  async find(id: string | undefined): Promise<Session | null> {
    if (id === undefined || id === '') return null;
    const key = digest(id);
    const session = this.#sessions.get(key);
    if (session === undefined) return null;
    if (session.expiresAt <= this.now()) {
      this.#sessions.delete(key);
      return null;
    }
    const token = await this.store.findToken(session.tokenHash);
    if (
      token === null ||
      token.id !== session.tokenId ||
      token.tenant !== session.tenant ||
      token.role !== 'operator'
    ) {
      this.#sessions.delete(key);
      return null;
    }
    return session;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.#sessions.delete(digest(id));
  }
}

/**
 * The session clauses, one function each: what an OpenAI Agents SDK session must do to keep a
 * conversation's history whole when runs overlap. The first ones restate, in this kit's words,
 * what the SDK's own in-memory session tests ask of any session (order, copies, idempotent
 * history transactions with a compare-and-swap on the suffix); the last ones are what a store
 * shared between runs and processes adds: no item a write accepted is ever lost, whether two runs
 * append at once or a compaction races an append, and a run that was superseded writes nothing.
 *
 * A refusal of a superseded run is recognised by a marker, not a class: the error carries
 * `isStaleSessionOwnerError: true`. Only types come from the SDK, so importing this kit loads no
 * optional peer; the session under test brings the SDK with it.
 */
import type { AgentInputItem, Session, SessionHistoryTransactionArgs } from '@openai/agents-core';

/** A session as the clauses use it: the SDK's interface and its optional capabilities. */
export interface SessionUnderTest extends Session {
  applyHistoryTransaction?(args: SessionHistoryTransactionArgs): Promise<void> | void;
}

/** How the clauses reach sessions: `openRun` starts a run on a session, after any earlier one. */
export interface SessionContractSubject {
  /**
   * The session `sessionId` as a new run holds it. For a session with ownership this claims it,
   * superseding the run that held it; one without opens it (in process: the same object).
   */
  openRun(sessionId: string): Promise<SessionUnderTest>;
}

type Clause = (subject: SessionContractSubject) => Promise<void>;

/** A failed clause: the message says what the session did instead. */
export class SessionContractViolation extends Error {
  override readonly name = 'SessionContractViolation';
}

function check(condition: boolean, message: () => string): void {
  if (!condition) throw new SessionContractViolation(message());
}

let sessions = 0;

function newSessionId(): string {
  sessions += 1;
  return `session-contract-${process.pid}-${Date.now().toString(36)}-${sessions}`;
}

function said(text: string): AgentInputItem {
  return { role: 'user', content: [{ type: 'input_text', text }] };
}

function texts(items: AgentInputItem[]): string[] {
  return items.map((item) => {
    const content = (item as { content?: unknown }).content;
    if (!Array.isArray(content)) return JSON.stringify(item);
    return content.map((part) => String((part as { text?: unknown }).text)).join('');
  });
}

function show(items: AgentInputItem[]): string {
  return JSON.stringify(texts(items));
}

function sameTexts(items: AgentInputItem[], expected: string[]): boolean {
  return JSON.stringify(texts(items)) === JSON.stringify(expected);
}

function isSupersededRefusal(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { isStaleSessionOwnerError?: unknown }).isStaleSessionOwnerError === true
  );
}

async function refusal(action: () => unknown): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  return undefined;
}

function transactional(
  session: SessionUnderTest,
): Required<Pick<SessionUnderTest, 'applyHistoryTransaction'>> & SessionUnderTest {
  check(
    typeof session.applyHistoryTransaction === 'function',
    () => 'the session has no applyHistoryTransaction',
  );
  return session as Required<Pick<SessionUnderTest, 'applyHistoryTransaction'>> & SessionUnderTest;
}

/**
 * Replaces the history with a compaction's items the way the runner does: through
 * replaceHistoryWithCompaction when the session has it, else by clearing it and adding them.
 */
async function compact(session: SessionUnderTest, items: AgentInputItem[]): Promise<void> {
  if (session.replaceHistoryWithCompaction !== undefined) {
    await session.replaceHistoryWithCompaction(items);
    return;
  }
  await session.clearSession();
  await session.addItems(items);
}

const compaction = {
  type: 'compaction',
  encrypted_content: 'summary of the turns before',
} as unknown as AgentInputItem;

export const SESSION_CLAUSES = {
  'keeps items in order through add, get, get with a limit, pop and clear': async (subject) => {
    const session = await subject.openRun(newSessionId());
    await session.addItems([said('hello')]);
    await session.addItems([said('one'), said('two')]);
    const all = await session.getItems();
    check(sameTexts(all, ['hello', 'one', 'two']), () => `getItems() answered ${show(all)}`);
    const last = await session.getItems(2);
    check(sameTexts(last, ['one', 'two']), () => `getItems(2) answered ${show(last)}`);
    const popped = await session.popItem();
    check(
      popped !== undefined && sameTexts([popped], ['two']),
      () => `popItem() answered ${JSON.stringify(popped)}`,
    );
    const after = await session.getItems();
    check(sameTexts(after, ['hello', 'one']), () => `after a pop: ${show(after)}`);
    await session.clearSession();
    const cleared = await session.getItems();
    check(cleared.length === 0, () => `after clearSession: ${show(cleared)}`);
    check((await session.getItems(3)).length === 0, () => 'getItems(3) after a clear is not empty');
    check((await session.popItem()) === undefined, () => 'popItem() of an empty session answered');
  },

  'stores and answers copies, not the caller’s objects': async (subject) => {
    const session = await subject.openRun(newSessionId());
    const added = said('start');
    await session.addItems([added]);
    (added as { content: unknown }).content = 'changed by the caller';
    const read = await session.getItems();
    (read[0] as { content: unknown }).content = 'changed by a reader';
    const again = await session.getItems();
    check(sameTexts(again, ['start']), () => `the stored item changed: ${show(again)}`);
  },

  'applies an append transaction once per operation id': async (subject) => {
    const session = transactional(await subject.openRun(newSessionId()));
    const args: SessionHistoryTransactionArgs = {
      operationId: 'append-1',
      transaction: { type: 'append_items', items: [said('committed')] },
    };
    await session.applyHistoryTransaction(args);
    await session.addItems([said('later')]);
    await session.applyHistoryTransaction(args);
    const items = await session.getItems();
    check(
      sameTexts(items, ['committed', 'later']),
      () => `after the same append transaction twice: ${show(items)}`,
    );
  },

  'replaces a suffix only while the history ends with it, once per operation id': async (
    subject,
  ) => {
    const session = transactional(await subject.openRun(newSessionId()));
    await session.addItems([said('start'), said('blocked')]);
    const mismatch = await refusal(() =>
      session.applyHistoryTransaction({
        operationId: 'replace-1',
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: [said('something else')],
          replacement: [said('accepted')],
        },
      }),
    );
    check(mismatch !== undefined, () => 'a suffix that does not match was replaced');
    const unchanged = await session.getItems();
    check(sameTexts(unchanged, ['start', 'blocked']), () => `after a refusal: ${show(unchanged)}`);
    const args: SessionHistoryTransactionArgs = {
      operationId: 'replace-1',
      transaction: {
        type: 'replace_suffix',
        expectedSuffix: [said('blocked')],
        replacement: [said('accepted')],
      },
    };
    await session.applyHistoryTransaction(args);
    await session.addItems([said('later')]);
    await session.applyHistoryTransaction(args);
    const items = await session.getItems();
    check(
      sameTexts(items, ['start', 'accepted', 'later']),
      () => `after the replacement applied and retried: ${show(items)}`,
    );
  },

  'refuses an operation id reused for another transaction, changing nothing': async (subject) => {
    const session = transactional(await subject.openRun(newSessionId()));
    await session.applyHistoryTransaction({
      operationId: 'reused',
      transaction: { type: 'append_items', items: [said('first')] },
    });
    const error = await refusal(() =>
      session.applyHistoryTransaction({
        operationId: 'reused',
        transaction: { type: 'append_items', items: [said('second')] },
      }),
    );
    check(error !== undefined, () => 'a reused operation id applied another transaction');
    const items = await session.getItems();
    check(sameTexts(items, ['first']), () => `after the refusal: ${show(items)}`);
  },

  'forgets operation ids when cleared': async (subject) => {
    const session = transactional(await subject.openRun(newSessionId()));
    const args: SessionHistoryTransactionArgs = {
      operationId: 'before-clear',
      transaction: { type: 'append_items', items: [said('committed')] },
    };
    await session.applyHistoryTransaction(args);
    await session.clearSession();
    await session.applyHistoryTransaction(args);
    const items = await session.getItems();
    check(sameTexts(items, ['committed']), () => `after clear and the same id: ${show(items)}`);
  },

  'refuses an invalid transaction or item before any change': async (subject) => {
    const session = transactional(await subject.openRun(newSessionId()));
    await session.addItems([said('start')]);
    const withDate = { ...said('dated'), providerData: { at: new Date(0) } } as AgentInputItem;
    const cases: unknown[] = [
      { operationId: '  ', transaction: { type: 'append_items', items: [] } },
      { operationId: 'unknown-type', transaction: { type: 'unknown' } },
      { operationId: 'no-transaction', transaction: null },
      { operationId: 'not-an-item', transaction: { type: 'append_items', items: [42] } },
      { operationId: 'dated', transaction: { type: 'append_items', items: [withDate] } },
    ];
    for (const args of cases) {
      const error = await refusal(() =>
        session.applyHistoryTransaction(args as SessionHistoryTransactionArgs),
      );
      check(error !== undefined, () => `accepted ${JSON.stringify(args)}`);
    }
    const items = await session.getItems();
    check(sameTexts(items, ['start']), () => `after the refusals: ${show(items)}`);
  },

  'two runs appending at once on a new session lose no accepted item': async (subject) => {
    const sessionId = newSessionId();
    const [first, second] = await Promise.all([
      subject.openRun(sessionId),
      subject.openRun(sessionId),
    ]);
    const appends = [first, second].flatMap((session, run) =>
      Array.from({ length: 6 }, (_, index) => ({ session, text: `run ${run} item ${index}` })),
    );
    const outcomes = await Promise.allSettled(
      appends.map(({ session, text }) => session.addItems([said(text)])),
    );
    const accepted = appends.filter((_, index) => outcomes[index]?.status === 'fulfilled');
    const reader = await subject.openRun(sessionId);
    const stored = texts(await reader.getItems());
    const lost = accepted.filter(({ text }) => !stored.includes(text)).map(({ text }) => text);
    check(lost.length === 0, () => `accepted but not stored: ${JSON.stringify(lost)}`);
    const refusedStored = appends
      .filter((_, index) => outcomes[index]?.status === 'rejected')
      .filter(({ text }) => stored.includes(text));
    check(refusedStored.length === 0, () => 'an append that was refused was stored');
  },

  'refuses every write of a superseded run with the marked error, storing none': async (
    subject,
  ) => {
    const sessionId = newSessionId();
    const old = await subject.openRun(sessionId);
    await old.addItems([said('from the first run')]);
    const current = await subject.openRun(sessionId);
    await current.addItems([said('from the second run')]);
    const attempts: [string, () => unknown][] = [
      ['addItems', () => old.addItems([said('late write')])],
      ['popItem', () => old.popItem()],
      ['clearSession', () => old.clearSession()],
      ['compaction', () => compact(old, [compaction])],
    ];
    for (const [name, attempt] of attempts) {
      const error = await refusal(attempt);
      check(isSupersededRefusal(error), () => `${name} of the superseded run was not refused`);
    }
    const items = await current.getItems();
    check(
      sameTexts(items, ['from the first run', 'from the second run']),
      () => `after the superseded run's writes: ${show(items)}`,
    );
  },

  'a compaction keeps an item appended after its read': async (subject) => {
    const session = await subject.openRun(newSessionId());
    await session.addItems([said('turn 1'), said('turn 2')]);
    const read = await session.getItems();
    // A write of the same run lands while the compaction of what was read is under way.
    await session.addItems([said('appended during the compaction')]);
    await compact(session, [compaction, ...read.slice(-1)]);
    const items = texts(await session.getItems());
    check(
      items.at(-1) === 'appended during the compaction',
      () => `after the compaction the history is ${JSON.stringify(items)}`,
    );
  },

  'a compaction by a superseded run removes nothing of the run after it': async (subject) => {
    const sessionId = newSessionId();
    const old = await subject.openRun(sessionId);
    await old.addItems([said('turn 1'), said('turn 2')]);
    const read = await old.getItems();
    const current = await subject.openRun(sessionId);
    await current.addItems([said('answer of the new run')]);
    await refusal(() => compact(old, [compaction, ...read.slice(-1)]));
    const items = texts(await current.getItems());
    check(
      JSON.stringify(items) === JSON.stringify(['turn 1', 'turn 2', 'answer of the new run']),
      () => `after the old run's compaction the history is ${JSON.stringify(items)}`,
    );
  },
} satisfies Record<string, Clause>;

export type SessionClause = keyof typeof SESSION_CLAUSES;

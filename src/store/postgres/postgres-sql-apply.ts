/**
 * The one step that writes: `apply` takes the transitions core planned in the process and applies
 * those whose rows still hold, in one transaction. Nothing here decides what core decides: it
 * locks, compares versions, writes rows and appends audit entries.
 *
 * 1. Locks. Rows that exist are locked FOR NO KEY UPDATE, table by table in a fixed order and by
 *    key within a table; the ranges a plan listed or joins are locked through transaction-level
 *    advisory locks in hash order (shared for a joiner, exclusive for a plan that listed the
 *    range). One global order, so these locks never deadlock each other. A key planned absent
 *    takes no lock (a cutover chunk plans a thousand of them, and each advisory lock would hold a
 *    slot of the server's shared lock table): a plan that writes it inserts it, and an insert of
 *    the same key by another transaction fails this statement with unique_violation once that
 *    transaction commits, so the statement is sent again and its compare then finds the row. A
 *    record or deletion a plan only reads as absent (a dependency read in another scope) has its
 *    scope's row locked instead, which every writer of the record locks too; the other keys a
 *    plan only reads as absent (an unregistered policy, a missing scope) only decide a refusal.
 * 2. Compares, under the locks. Each row's `row_version` (the transaction id that last wrote it,
 *    0 when absent) against the one the plan read; each listed range's names against the hash of
 *    the names the plan read; and store time: the plan ran at an estimate of the database clock,
 *    so every time a locked row holds (a lease's or a claim's expiry, a retry's due time) must be
 *    on the same side of the database clock now as of the estimate, and the estimate within
 *    `p_skew_ms` of it. Without an injected clock this is what makes the database clock judge
 *    every lease.
 * 3. Writes, for the transitions that held: per table, one INSERT of the rows planned new and an
 *    UPDATE by key of each row planned existing (whose locks this statement holds), then the audit
 *    entries in transition order under the shared audit lock (postgres-sql-audit.ts).
 *
 * The answer names the transitions that did not hold and carries the current rows of every key
 * they locked, so the caller plans them again without another read.
 */
import { OPEN_INTENT_SQL_LIST } from '../open-intent-sql.js';
import {
  BASELINE_TABLES,
  GRANT_TOKEN_TABLES,
  TABLES,
  type Column,
  type TableShape,
} from './postgres-tables.js';

/**
 * Every statement of these functions finds rows by key: nested loops over primary keys. A hash or
 * merge join, picked by a plan cached while a table was small, would read a tenant's whole table
 * (every stored outcome, say) on each call, ever slower as the table grows; so they are off here.
 */
const KEYED_PLANS =
  'SET enable_hashjoin = off SET enable_mergejoin = off SET enable_material = off SET enable_bitmapscan = off SET enable_seqscan = off';

const names = (columns: readonly Column[]) => columns.map(([name]) => name);
const typed = (columns: readonly Column[]) =>
  columns.map(([name, type]) => `${name} ${type}`).join(', ');
const keyMatch = (t: TableShape) =>
  ['x.tenant = p_tenant', ...names(t.keys).map((key) => `x.${key} = j.${key}`)].join(' AND ');

/**
 * Locks a table's rows the plans saw (planned version > 0) in key order, and collects the
 * transitions whose row changed or vanished: one statement, since a row locked FOR NO KEY UPDATE
 * is read as its latest committed version.
 */
function lockAndCompare(t: TableShape): string {
  const keys = names(t.keys);
  return `
  IF k ? '${t.type}' THEN
    SELECT array_agg(s.t) INTO v_bad FROM (
      SELECT j.t, coalesce(x.row_version, 0) <> j.v AS bad
        FROM (SELECT * FROM jsonb_to_recordset(k->'${t.type}') AS r(t int, v bigint, ${typed(t.keys)})
              ORDER BY ${keys.join(', ')}) j
        LEFT JOIN LATERAL (SELECT * FROM @schema@.${t.table} x WHERE ${keyMatch(t)}
          FOR NO KEY UPDATE) x ON true) s
      WHERE s.bad IS NOT FALSE;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;`;
}

/** The transitions one of whose locked rows holds a time the database clock judges otherwise. */
function timeGuard(t: TableShape): string {
  if (t.stale === undefined) return '';
  return `
  IF k ? '${t.type}' AND NOT p_fixed_clock THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(k->'${t.type}') AS j(t int, v bigint, ${typed(t.keys)})
      CROSS JOIN LATERAL (SELECT ${t.stale} AS stale FROM @schema@.${t.table} x
        WHERE ${keyMatch(t)} LIMIT 1) x
      WHERE x.stale;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;`;
}

/**
 * The transitions that planned a key absent which now has a row (no lock: see above). Each key is
 * looked up on its own (LATERAL … LIMIT 1), so the plan cannot walk the tenant's rows instead.
 */
function compareAbsent(t: TableShape): string {
  return `
  IF a ? '${t.type}' THEN
    SELECT array_agg(j.t) INTO v_bad
      FROM jsonb_to_recordset(a->'${t.type}') AS j(t int, v bigint, ${typed(t.keys)})
      CROSS JOIN LATERAL (SELECT 1 FROM @schema@.${t.table} x WHERE ${keyMatch(t)} LIMIT 1) x;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;`;
}

/** Inserts the rows planned new and updates the rows planned existing, of the transitions held. */
function write(t: TableShape): string {
  const all = [...t.keys, ...t.columns];
  const source = (rows: string) =>
    `jsonb_to_recordset(${rows}->'${t.type}') AS j(t int, v bigint, ${typed(all)})`;
  const insert = `
  IF v_insert ? '${t.type}' THEN
    INSERT INTO @schema@.${t.table} (tenant, ${names(all).join(', ')}, row_version)
      SELECT p_tenant, ${names(all)
        .map((n) => `j.${n}`)
        .join(', ')}, v_version
      FROM ${source('v_insert')} WHERE j.t <> ALL (v_failed);
  END IF;`;
  // Row by row, each UPDATE by its whole primary key: a set-based UPDATE ... FROM may be planned
  // to walk every row of the tenant.
  const update =
    t.columns.length === 0
      ? ''
      : `
  IF v_update ? '${t.type}' THEN
    FOR r IN SELECT * FROM ${source('v_update')} WHERE j.t <> ALL (v_failed) LOOP
      UPDATE @schema@.${t.table} x SET ${[...names(t.columns).map((n) => `${n} = r.${n}`), 'row_version = v_version'].join(', ')}
        WHERE ${keyMatch(t).replace(/= j\./g, '= r.')};
    END LOOP;
  END IF;`;
  return insert + update;
}

/** A new cutover's scopes, as rows without a step yet. */
const CUTOVER_SCOPES = `
  IF v_insert ? 'cutover' THEN
    INSERT INTO @schema@.cutover_scopes (tenant, cutover_id, scope, row_version)
      SELECT p_tenant, j.cutover_id, s.scope, v_version
      FROM jsonb_to_recordset(v_insert->'cutover') AS j(t int, v bigint, cutover_id text, scopes jsonb)
      CROSS JOIN LATERAL jsonb_array_elements_text(j.scopes) AS s(scope)
      WHERE j.t <> ALL (v_failed);
  END IF;`;

/**
 * The apply function over these tables; with `tokens`, audit entries keep the token their request
 * was made with. Version 1's text is made by the same function, so it stays what it was.
 */
function applyFunction(
  create: 'CREATE' | 'CREATE OR REPLACE',
  tables: readonly TableShape[],
  tokens: boolean,
  deletes = false,
): string {
  const token = (text: string) => (tokens ? text : '');
  return `
${create} FUNCTION @schema@.apply(
  p_tenant text, p_now bigint, p_fixed_clock boolean, p_skew_ms bigint, p jsonb
) RETURNS jsonb LANGUAGE plpgsql ${KEYED_PLANS} AS $fn$
DECLARE
  k jsonb := coalesce(p->'lock', '{}');
  a jsonb := coalesce(p->'absent', '{}');
  v_insert jsonb := coalesce(p->'insert', '{}');
  v_update jsonb := coalesce(p->'update', '{}');
  v_now bigint;
  v_version bigint;
  v_bad int[];
  v_failed int[] := '{}';
  r record;
BEGIN
  -- 1. Locks and compares of the rows that exist, in table order and key order; then ranges.${tables.map(lockAndCompare).join('')}
  IF p ? 'advisory' THEN
    PERFORM CASE WHEN a.shared THEN pg_advisory_xact_lock_shared(a.h)
                 ELSE pg_advisory_xact_lock(a.h) END
      FROM (SELECT hashtextextended('@schema@:' || p_tenant || ':' || j.key, 0) AS h,
                   bool_and(j.shared) AS shared
              FROM jsonb_to_recordset(p->'advisory') j(key text, shared boolean)
              GROUP BY 1 ORDER BY 1) a;
  END IF;

  -- 2. Under every lock: store time, absent keys, ranges.
  v_now := CASE WHEN p_fixed_clock THEN p_now ELSE @schema@.db_now() END;${tables.map(timeGuard).join('')}${tables.map(compareAbsent).join('')}
  IF p ? 'ranges' THEN
    SELECT array_agg(j.t) INTO v_bad FROM jsonb_to_recordset(p->'ranges') j(t int, range jsonb, hash text)
      WHERE @schema@.range_hash(@schema@.range_names(p_tenant, j.range)) <> j.hash;
    v_failed := v_failed || coalesce(v_bad, '{}');
  END IF;
  IF NOT p_fixed_clock AND abs(v_now - p_now) > p_skew_ms THEN
    v_failed := ARRAY(SELECT generate_series(0, (p->>'n')::integer - 1));
  END IF;
  IF cardinality(v_failed) > 0 THEN
    v_failed := ARRAY(SELECT DISTINCT f FROM unnest(v_failed) f ORDER BY f);
  END IF;
  IF cardinality(v_failed) >= (p->>'n')::integer THEN
    RETURN jsonb_build_object('now', v_now, 'failed', to_jsonb(v_failed),
      'rows', @schema@.load_rows(p_tenant, k), 'absentRows', @schema@.load_rows(p_tenant, a));
  END IF;

  -- 3. Writes of the transitions that held, and their audit entries.
  v_version := pg_current_xact_id()::text::bigint;${CUTOVER_SCOPES}${tables.map(write).join('')}${deletes ? ROLLOUT_DELETES : ''}
  IF p ? 'audit' THEN
    PERFORM pg_advisory_xact_lock_shared(hashtextextended('fencegate.audit:@schema@', 0));
    INSERT INTO @schema@.audit (at, tenant, scope, kind, outcome, reason, task_id, operation_id,
        holder, policy_version, fence, current_fence, lease_expires_at, records, effect_key, reads${token(', token_id')})
      SELECT j.at, p_tenant, j.scope, j.kind, j.outcome, j.reason, j.task_id, j.operation_id,
        j.holder, j.policy_version, j.fence, j.current_fence, j.lease_expires_at, j.records,
        j.effect_key, j.reads${token(', j.token_id')}
      FROM jsonb_to_recordset(p->'audit') j(t int, i int, at bigint, scope text, kind text,
        outcome text, reason text, task_id text, operation_id text, holder text,
        policy_version text, fence bigint, current_fence bigint, lease_expires_at bigint,
        records jsonb, effect_key text, reads jsonb${token(', token_id text')})
      WHERE j.t <> ALL (v_failed)
      ORDER BY j.i;
  END IF;
  RETURN jsonb_build_object('now', v_now, 'version', v_version, 'failed', to_jsonb(v_failed),
    'rows', CASE WHEN cardinality(v_failed) > 0 THEN @schema@.load_rows(p_tenant, k) END,
    'absentRows', CASE WHEN cardinality(v_failed) > 0 THEN @schema@.load_rows(p_tenant, a) END);
END
$fn$;
`;
}

/**
 * Rollout documents removed by the transitions that held (version 5): the tenant's active
 * rollouts once none is left (core/plan/plan-rollout.ts). Each was locked as a row the plan read.
 */
const ROLLOUT_DELETES = `
  IF p ? 'delete' THEN
    DELETE FROM @schema@.rollout_rows x
      USING jsonb_to_recordset(p->'delete'->'rollout') AS j(t int, v bigint, key text)
      WHERE x.tenant = p_tenant AND x.key = j.key AND j.t <> ALL (v_failed);
  END IF;`;

/** The rollout documents' range (version 4): their keys with a prefix. */
const ROLLOUT_RANGE_NAMES = `
  WHEN 'rolloutKeys' THEN
    RETURN ARRAY(SELECT x.key FROM @schema@.rollout_rows x
      WHERE x.tenant = p_tenant AND x.key >= r->>'prefix' AND starts_with(x.key, r->>'prefix')
      ORDER BY x.key);`;

const ROLLOUT_LOAD_ROWS = `,
  'rollout', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'rollout', '[]')) k(key text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.rollout_rows x WHERE x.tenant = p_tenant AND x.key = k.key LIMIT 1) x)`;

const ROLLOUT_LOAD_RANGE = `      WHEN 'rolloutKeys' THEN jsonb_build_object('rollout', coalesce(v_keys->'rollout', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('key', n)), '[]') FROM unnest(v_names) n))
`;

/** The range reader; with `rollouts`, it reads the rollout documents' range too. */
function rangeNamesFunction(create: 'CREATE' | 'CREATE OR REPLACE', rollouts: boolean): string {
  return `
${create} FUNCTION @schema@.range_names(p_tenant text, r jsonb) RETURNS text[]
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  CASE r->>'type'
  WHEN 'scopeRecords' THEN
    RETURN ARRAY(SELECT x.name FROM @schema@.records x
      WHERE x.tenant = p_tenant AND x.scope = r->>'scope' ORDER BY x.name);
  WHEN 'scopeIntents' THEN
    RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
      WHERE x.tenant = p_tenant AND x.scope = r->>'scope' ORDER BY x.effect_key);
  WHEN 'openIntents' THEN
    IF jsonb_typeof(r->'due') = 'object' THEN
      -- Claimable at 'at' (core/intent-rules.ts isClaimable): pending or unknown and due, or
      -- claimed with an expired claim.
      RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
        WHERE x.tenant = p_tenant AND x.status IN ${OPEN_INTENT_SQL_LIST}
          AND CASE WHEN x.status = 'claimed'
                THEN x.claim_expires_at <= (r->'due'->>'at')::bigint
                ELSE x.next_attempt_at IS NULL OR x.next_attempt_at <= (r->'due'->>'at')::bigint
              END
          AND (jsonb_typeof(r->'due'->'targets') <> 'array'
               OR x.target IN (SELECT jsonb_array_elements_text(r->'due'->'targets')))
        ORDER BY coalesce(x.next_attempt_at, x.created_at), x.effect_key
        LIMIT (r->'due'->>'limit')::integer);
    END IF;
    RETURN ARRAY(SELECT x.effect_key FROM @schema@.intents x
      WHERE x.tenant = p_tenant AND x.status IN ${OPEN_INTENT_SQL_LIST} ORDER BY x.effect_key);
  WHEN 'scopes' THEN
    RETURN ARRAY(SELECT x.scope FROM @schema@.scopes x
      WHERE x.tenant = p_tenant AND x.scope >= r->>'prefix' AND starts_with(x.scope, r->>'prefix')
      ORDER BY x.scope);
  WHEN 'cutoverSteps' THEN
    RETURN ARRAY(SELECT x.scope FROM @schema@.cutover_scopes x
      WHERE x.tenant = p_tenant AND x.cutover_id = r->>'cutoverId' AND x.fence IS NOT NULL
      ORDER BY x.scope);${rollouts ? ROLLOUT_RANGE_NAMES : ''}
  END CASE;
  RAISE EXCEPTION 'unknown range type %', r->>'type';
END
$fn$;
`;
}

/** A cutover's row with its list, as versions 1 to 7 load it. */
const CUTOVER_WITH_LIST = `to_jsonb(x) || jsonb_build_object('scopes',
      (SELECT coalesce(jsonb_agg(s.scope ORDER BY s.scope), '[]') FROM @schema@.cutover_scopes s
        WHERE s.tenant = p_tenant AND s.cutover_id = x.cutover_id))`;

/**
 * The row loader; with `rollouts`, it loads rollout documents too. Without `cutoverLists` a
 * cutover is loaded without its list (version 8 on): 100,000 names were 2 MB and a second of the
 * database on every load of the row (core reads the list as a page when a plan needs it).
 */
function loadRowsFunction(
  create: 'CREATE' | 'CREATE OR REPLACE',
  rollouts: boolean,
  cutoverLists = true,
): string {
  return `-- The rows of the given keys ({type: [key columns…]}), as stored, with their row_version.
${create} FUNCTION @schema@.load_rows(p_tenant text, p_keys jsonb) RETURNS jsonb
LANGUAGE sql STABLE ${KEYED_PLANS} AS $fn$
SELECT jsonb_build_object(
  'scope', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'scope', '[]')) k(scope text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.scopes x WHERE x.tenant = p_tenant AND x.scope = k.scope LIMIT 1) x),
  'fenceGrant', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'fenceGrant', '[]')) k(scope text, fence bigint)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.fence_grants x WHERE x.tenant = p_tenant AND x.scope = k.scope AND x.fence = k.fence LIMIT 1) x),
  'record', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'record', '[]')) k(scope text, name text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.records x WHERE x.tenant = p_tenant AND x.scope = k.scope AND x.name = k.name LIMIT 1) x),
  'deletion', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'deletion', '[]')) k(scope text, name text, revision bigint)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.record_deletions x WHERE x.tenant = p_tenant AND x.scope = k.scope AND x.name = k.name AND x.revision = k.revision LIMIT 1) x),
  'operation', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'operation', '[]')) k(operation_id text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.operations x WHERE x.tenant = p_tenant AND x.operation_id = k.operation_id LIMIT 1) x),
  'intent', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'intent', '[]')) k(effect_key text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.intents x WHERE x.tenant = p_tenant AND x.effect_key = k.effect_key LIMIT 1) x),
  'policy', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'policy', '[]')) k(version text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.policies x WHERE x.tenant = p_tenant AND x.version = k.version LIMIT 1) x),
  'cutover', (SELECT coalesce(jsonb_agg(${cutoverLists ? CUTOVER_WITH_LIST : 'to_jsonb(x)'}), '[]')
    FROM jsonb_to_recordset(coalesce(p_keys->'cutover', '[]')) k(cutover_id text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.cutovers x WHERE x.tenant = p_tenant AND x.cutover_id = k.cutover_id LIMIT 1) x),
  'cutoverStep', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'cutoverStep', '[]')) k(cutover_id text, scope text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.cutover_scopes x WHERE x.tenant = p_tenant AND x.cutover_id = k.cutover_id AND x.scope = k.scope LIMIT 1) x),
  'job', (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]') FROM jsonb_to_recordset(coalesce(p_keys->'job', '[]')) k(job_id text)
    CROSS JOIN LATERAL (SELECT * FROM @schema@.jobs x WHERE x.tenant = p_tenant AND x.job_id = k.job_id LIMIT 1) x)${rollouts ? ROLLOUT_LOAD_ROWS : ''}
)
$fn$;
`;
}

/** The range loader; with `rollouts`, it loads a rollout range's documents. */
function loadRangesFunction(create: 'CREATE' | 'CREATE OR REPLACE', rollouts: boolean): string {
  return `-- Ranges as a plan reads them ([range…]): each range's names and their hash, and the rows named.
${create} FUNCTION @schema@.load_ranges(p_tenant text, p_ranges jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE ${KEYED_PLANS} AS $fn$
DECLARE
  r jsonb;
  v_names text[];
  v_ranges jsonb := '[]';
  v_keys jsonb := '{}';
  v_type text;
BEGIN
  FOR r IN SELECT value FROM jsonb_array_elements(p_ranges) LOOP
    v_names := @schema@.range_names(p_tenant, r);
    v_ranges := v_ranges || jsonb_build_array(jsonb_build_object(
      'names', to_jsonb(v_names), 'hash', @schema@.range_hash(v_names)));
    v_type := r->>'type';
    v_keys := v_keys || CASE v_type
      WHEN 'scopeRecords' THEN jsonb_build_object('record', coalesce(v_keys->'record', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', r->>'scope', 'name', n)), '[]')
          FROM unnest(v_names) n))
      WHEN 'scopes' THEN jsonb_build_object('scope', coalesce(v_keys->'scope', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('scope', n)), '[]') FROM unnest(v_names) n))
      -- A chunk reads only which scopes moved; their rows would grow with every chunk.
      WHEN 'cutoverSteps' THEN '{}'::jsonb
${rollouts ? ROLLOUT_LOAD_RANGE : ''}      ELSE jsonb_build_object('intent', coalesce(v_keys->'intent', '[]') ||
        (SELECT coalesce(jsonb_agg(jsonb_build_object('effect_key', n)), '[]') FROM unnest(v_names) n))
    END;
  END LOOP;
  RETURN jsonb_build_object('ranges', v_ranges, 'rows', @schema@.load_rows(p_tenant, v_keys));
END
$fn$;
`;
}

/** The readers of rows and ranges, and version 1's apply step. */
export const APPLY_SQL = `${rangeNamesFunction('CREATE', false)}
CREATE FUNCTION @schema@.range_hash(p_names text[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT md5(to_json(p_names)::text) $$;

${loadRowsFunction('CREATE', false)}
${loadRangesFunction('CREATE', false)}${applyFunction('CREATE', BASELINE_TABLES, false)}`;

/**
 * Version 2: the worker token a scope's grant is bound to, and the token of an audit entry's
 * request; rows written before have neither (null). The apply step writes both.
 */
export const GRANT_TOKENS_SQL = `
ALTER TABLE @schema@.scopes ADD COLUMN grant_token_id text;
ALTER TABLE @schema@.audit ADD COLUMN token_id text;
${applyFunction('CREATE OR REPLACE', GRANT_TOKEN_TABLES, true)}`;

/**
 * Version 4: rollouts (core/rollout-rows.ts), as JSON documents by key; the readers and the apply
 * step know their table and their range.
 */
export const ROLLOUTS_SQL = `
CREATE TABLE @schema@.rollout_rows (
  tenant text COLLATE "C" NOT NULL,
  key text COLLATE "C" NOT NULL,
  value jsonb NOT NULL,
  row_version bigint NOT NULL,
  PRIMARY KEY (tenant, key)
);
${rangeNamesFunction('CREATE OR REPLACE', true)}
${loadRowsFunction('CREATE OR REPLACE', true)}
${loadRangesFunction('CREATE OR REPLACE', true)}
${applyFunction('CREATE OR REPLACE', TABLES, true)}`;

/** Version 5: the apply step also removes rollout documents (ROLLOUT_DELETES). */
export const ROLLOUT_DELETES_SQL = applyFunction('CREATE OR REPLACE', TABLES, true, true);

/** Version 8: a cutover's row is loaded without its list (loadRowsFunction). */
export const CUTOVER_ROWS_WITHOUT_LISTS_SQL = loadRowsFunction('CREATE OR REPLACE', true, false);

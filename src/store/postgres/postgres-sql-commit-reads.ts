/**
 * Migration 12: a commit's audit entry names its dependency reads, `[{scope, name, expected,
 * actual}]` in `audit.reads` (null without reads), so verify can replay check 7.
 *
 * The commit function is replaced by the released one (postgres-sql-commit.ts) with three edits,
 * each applied to text that must occur exactly as given: the check-7 loop now reads every
 * dependency (it stopped at the first stale one) and collects them, and both audit inserts store
 * the collection. Everything else, locks and check order included, is the released function.
 */
import { COMMIT_SQL } from './postgres-sql-commit.js';

interface SqlEdit {
  find: string;
  replace: string;
  /** How many times `find` occurs in the released text. */
  times: number;
}

function applyEdits(sql: string, edits: readonly SqlEdit[]): string {
  let out = sql;
  for (const edit of edits) {
    const found = out.split(edit.find).length - 1;
    if (found !== edit.times) {
      throw new Error(
        `migration edit expected ${edit.times} occurrence(s) of ${JSON.stringify(edit.find.slice(0, 60))}, found ${found}`,
      );
    }
    out = out.replaceAll(edit.find, edit.replace);
  }
  return out;
}

const RELEASED_COMMIT = COMMIT_SQL.slice(COMMIT_SQL.indexOf('CREATE FUNCTION @schema@.commit('));

const CHECK_7_RELEASED = `  IF v_rejection IS NULL THEN
    FOR i IN 1 .. v_read_count LOOP
      v_item := v_reads->(i - 1);
      SELECT x.revision INTO v_current FROM @schema@.records x
        WHERE x.tenant = p_tenant AND x.scope = v_item->>'scope' AND x.name = v_item->>'name';
      IF NOT FOUND THEN v_current := 0; END IF;
      IF v_current <> (v_item->>'revision')::bigint THEN`;

// Every dependency is read (one primary-key probe each, as before) whatever the outcome, so the
// audit names the revision each one had; the first stale one still decides the rejection.
const CHECK_7_AUDITED = `  FOR i IN 1 .. v_read_count LOOP
      v_item := v_reads->(i - 1);
      SELECT x.revision INTO v_current FROM @schema@.records x
        WHERE x.tenant = p_tenant AND x.scope = v_item->>'scope' AND x.name = v_item->>'name';
      IF NOT FOUND THEN v_current := 0; END IF;
      v_audit_reads := v_audit_reads || jsonb_build_object('scope', v_item->>'scope',
        'name', v_item->>'name', 'expected', (v_item->>'revision')::bigint, 'actual', v_current);
      IF v_rejection IS NULL AND v_current <> (v_item->>'revision')::bigint THEN`;

const CHECK_7_END_RELEASED = `            'expected', (v_item->>'revision')::bigint, 'actual', v_current));
        EXIT;
      END IF;
    END LOOP;
  END IF;`;

const CHECK_7_END_AUDITED = `            'expected', (v_item->>'revision')::bigint, 'actual', v_current));
      END IF;
    END LOOP;`;

const COMMIT_WITH_READS = applyEdits(RELEASED_COMMIT, [
  {
    find: 'CREATE FUNCTION @schema@.commit(',
    replace: 'CREATE OR REPLACE FUNCTION @schema@.commit(',
    times: 1,
  },
  {
    find: `  v_audit_records jsonb := '[]';\n`,
    replace: `  v_audit_records jsonb := '[]';\n  v_audit_reads jsonb := '[]';\n`,
    times: 1,
  },
  { find: CHECK_7_RELEASED, replace: CHECK_7_AUDITED, times: 1 },
  { find: CHECK_7_END_RELEASED, replace: CHECK_7_END_AUDITED, times: 1 },
  {
    find: 'lease_expires_at, records)\n',
    replace: 'lease_expires_at, records, reads)\n',
    times: 2,
  },
  {
    find: `        v_audit_records\n      FROM stored;`,
    replace: `        v_audit_records, nullif(v_audit_reads, '[]'::jsonb)\n      FROM stored;`,
    times: 1,
  },
  {
    find: `v_s_lease, v_audit_records\n    FROM stored;`,
    replace: `v_s_lease, v_audit_records,\n      nullif(v_audit_reads, '[]'::jsonb)\n    FROM stored;`,
    times: 1,
  },
]);

export const COMMIT_READS_SQL = `
ALTER TABLE @schema@.audit ADD COLUMN reads jsonb;

${COMMIT_WITH_READS}`;

import { describe, expect, it } from 'vitest';
import { parseStoreFilter } from './store-filter.js';

describe('FENCEGATE_STORES', () => {
  it('keeps every store when unset or empty', () => {
    expect(parseStoreFilter(undefined)).toEqual(['sqlite', 'postgres', 'etcd']);
    expect(parseStoreFilter(' ')).toEqual(['sqlite', 'postgres', 'etcd']);
  });

  it('keeps only the named stores, in the list order, whatever the spacing and case', () => {
    expect(parseStoreFilter('etcd, SQLite')).toEqual(['sqlite', 'etcd']);
    expect(parseStoreFilter('postgres')).toEqual(['postgres']);
  });

  it('refuses an unknown name, naming it and the stores it may name', () => {
    expect(() => parseStoreFilter('sqlite,mysql')).toThrow(
      'FENCEGATE_STORES names unknown store(s) "mysql": use a comma-separated list of sqlite, postgres, etcd',
    );
  });
});

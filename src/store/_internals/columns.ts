import type { Database } from 'better-sqlite3';

/** Whether `table` has `column`: runs stored by an older version lack the columns added since. */
export function hasColumn(db: Database, table: string, column: string): boolean {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
}

import type Database from 'better-sqlite3';

/**
 * SQLite's lower() folds ASCII only. These fold as JavaScript does (and as the delivery filters compare), which is
 * what PostgreSQL's lower() does in a UTF-8 database, so "Élodie" is found by "élodie" in either store. Every
 * connection that runs the admin's queries registers them: the store's own and the reader thread's.
 */
export function registerTextFunctions(db: Database.Database): void {
  const fold = (fn: (text: string) => string) => (value: unknown) => (typeof value === 'string' ? fn(value) : value);
  db.function(
    'callhook_lower',
    { deterministic: true },
    fold((text) => text.toLowerCase()),
  );
  db.function(
    'callhook_fold',
    { deterministic: true },
    fold((text) => text.trim().toLowerCase()),
  );
}

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
  registerMatchFunction(db);
}

/**
 * `callhook_matches(pattern, text)`: whether a JavaScript regular expression matches, for a person's number in any
 * spelling (privacy/person.ts). The pattern of one request is compiled once.
 */
export function registerMatchFunction(db: Database.Database): void {
  let last: { source: string; regex: RegExp } | undefined;
  db.function('callhook_matches', { deterministic: true }, (pattern: unknown, value: unknown) => {
    if (typeof pattern !== 'string' || value === null || value === undefined) return 0;
    if (last?.source !== pattern) last = { source: pattern, regex: new RegExp(pattern) };
    const text = typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('utf8');
    return last.regex.test(text) ? 1 : 0;
  });
}

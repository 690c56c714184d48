import { seedStore } from './backlog.js';
import { type BodyFactory, callFields } from './bodies.js';

/**
 * An in-call hook's store: a history of calls from many callers, each caller several times, written through the
 * store itself. The lookups then ask for those callers, in the local format callers give their numbers in.
 */

/** `+9198…`: a valid Indian mobile number for each caller index. */
const callerNumber = (caller: number) => `98${String(caller).padStart(8, '0')}`;

export async function createHistory(dataDir: string, calls: number, callers: number): Promise<void> {
  await seedStore(
    dataDir,
    calls,
    (n) => ({ ...callFields(`history-${n}`), phone_number: callerNumber(n % callers), order_id: `ORD-${n}` }),
    [],
  );
}

/** Lookup bodies cycling through the callers, the number written as a caller says it (`098…`). */
export function lookupBodies(callers: number): BodyFactory {
  let n = 0;
  const next = () => JSON.stringify({ phone_number: `0${callerNumber(n++ % callers)}` });
  return { contentType: 'application/json', bytes: Buffer.byteLength(next()), next };
}

/**
 * What this process made in HubSpot in the last minutes, by the key it was looked up by (a record id for a call, a
 * phone number for a contact). HubSpot's search index lags a new object by seconds
 * (https://developers.hubspot.com/docs/api/crm/search, "Limitations"), so a repeat delivered within those seconds (a
 * redeliver clicked at once, an edit saved right after the call arrived) would search, find nothing and make a second
 * one. The worker's own retries come later than the lag (the first after about 30 s,
 * docs/reference.md#sinks-and-delivery); this covers the repeats that do not wait, in this process. Another replica, or
 * this one after a restart, relies on the search alone.
 */

export interface Recent {
  get(key: string): string | undefined;
  set(key: string, id: string): void;
}

/** Long past HubSpot's lag, short enough that an object deleted in HubSpot since is soon forgotten here. */
const TTL_MS = 5 * 60_000;
/** A bound on memory whatever the traffic: the oldest entries go first. */
const MAX_ENTRIES = 5_000;

export function recentIds({
  ttlMs = TTL_MS,
  max = MAX_ENTRIES,
  now = Date.now,
}: {
  ttlMs?: number;
  max?: number;
  now?: () => number;
} = {}): Recent {
  const entries = new Map<string, { id: string; at: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (now() - entry.at > ttlMs) {
        entries.delete(key);
        return undefined;
      }
      return entry.id;
    },
    set(key, id) {
      entries.delete(key);
      entries.set(key, { id, at: now() });
      // A Map iterates in insertion order: the first key is the oldest.
      while (entries.size > max) entries.delete(entries.keys().next().value!);
    },
  };
}

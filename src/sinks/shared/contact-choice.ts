/**
 * A caller as a CRM contact, and the choice among several (docs/reference.md#crm-sinks: a contact search that finds
 * several contacts uses the most recently updated and says so in the attempt), the same words for every CRM.
 */
export interface FoundContact {
  id: string;
  /** Said with the attempt when the search found more than one contact. */
  note?: string;
}

/**
 * Of the contacts a search matched, the one updated last (a contact with no time of update counts as oldest); with
 * several, a note naming them all: `2 HubSpot contacts have +919812345678 (12, 9); updated 12, the most recently
 * updated`. `what` is the start of that sentence, up to the list.
 */
export function mostRecentlyUpdated<T extends { id: string }>(
  matches: readonly T[],
  updatedAt: (contact: T) => string | null | undefined,
  what: string,
): FoundContact | undefined {
  const time = (contact: T) => {
    const at = Date.parse(updatedAt(contact) ?? '');
    return Number.isNaN(at) ? 0 : at;
  };
  const sorted = [...matches].sort((a, b) => time(b) - time(a));
  const [latest] = sorted;
  if (!latest) return undefined;
  if (sorted.length === 1) return { id: latest.id };
  return {
    id: latest.id,
    note: `${sorted.length} ${what} (${sorted.map((c) => c.id).join(', ')}); updated ${latest.id}, the most recently updated`,
  };
}

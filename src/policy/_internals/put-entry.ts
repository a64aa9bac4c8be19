/** A learned value and how many times it was updated. */
export interface ValueEntry {
  value: number;
  visits: number;
}

/** How a loaded row goes into a table: replacing what is there, or merged with it. */
export type PutEntry = <K>(table: Map<K, ValueEntry>, key: K, value: number, visits: number) => void;

/** `load`: the saved entry replaces this campaign's. */
export const setEntry: PutEntry = (table, key, value, visits) => {
  table.set(key, { value, visits });
};

/**
 * `merge`: `visits` more visits of another campaign's `value` are added to this campaign's entry,
 * the value becoming the mean of the two weighted by their visits.
 */
export const mergeEntry: PutEntry = (table, key, value, visits) => {
  const entry = table.get(key);
  if (entry === undefined || entry.visits <= 0) {
    table.set(key, { value, visits });
    return;
  }
  const total = entry.visits + visits;
  entry.value = (entry.value * entry.visits + value * visits) / total;
  entry.visits = total;
};

/**
 * Gathers what arrives within one turn of the event loop and hands it to `send` as one batch. setImmediate runs
 * after the turn's I/O callbacks, so everything those callbacks add (every request whose body arrived in the turn,
 * every call that settled in it) joins the batch.
 */
export function perTurn<T>(send: (batch: T[]) => void): (item: T) => void {
  let batch: T[] = [];
  const flush = () => {
    const items = batch;
    batch = [];
    send(items);
  };
  return (item) => {
    batch.push(item);
    if (batch.length === 1) setImmediate(flush);
  };
}

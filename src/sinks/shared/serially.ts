/**
 * Runs the functions it is given one after another, each starting when the one before has settled: a lock for work
 * that must not overlap (a sheet's read-then-write, a file's append and the rename that replaces it), in arrival order.
 */
export function serially(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** How `callhook serve` ends (docs/reference.md#shutdown). */

/** Rejects when `promise` has not settled within `ms`: a drain's bound, so nothing it waits on holds it for ever. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} still running after ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * The connection of a sink whose service may be down (docs/reference.md#queues-and-databases): none is opened by
 * `create()`, so a service that is unreachable at start-up does not stop start-up; the first delivery opens it, later
 * ones reuse it, and one that failed is forgotten, so the next delivery opens another. The deliveries' own retry
 * schedule does the waiting in between (src/delivery/backoff.ts), never the client library.
 *
 * Under it, `lazyValue`: the same "made by the first who asks, shared, made again once forgotten" for what is no
 * connection and has nothing to close (the postgres sink's table, as found when it first connects).
 */

export interface LazyValue<T> {
  /** The value, made first when there is none; callers that ask at once share one making. A failed one is not kept. */
  get(): Promise<T>;
  /** The value made and not forgotten, if any (not one still being made). */
  current(): T | undefined;
  /**
   * Forgets `value` when it is still the current one (a stale report changes nothing): the next `get()` makes another.
   */
  forget(value: T): void;
  /** Forgets whatever is made or being made. */
  reset(): void;
}

export function lazyValue<T>(make: () => Promise<T>): LazyValue<T> {
  let making: Promise<T> | undefined;
  let made: { value: T } | undefined;
  return {
    get() {
      if (making) return making;
      const attempt = make().then(
        (value) => {
          if (making === attempt) made = { value };
          return value;
        },
        (err: unknown) => {
          if (making === attempt) making = undefined;
          throw err;
        },
      );
      making = attempt;
      return attempt;
    },
    current: () => made?.value,
    forget(value) {
      if (made !== undefined && made.value === value) {
        made = undefined;
        making = undefined;
      }
    },
    reset() {
      made = undefined;
      making = undefined;
    },
  };
}

export interface LazyConnection<T> {
  /** The open connection, opened first when there is none; deliveries that ask at once share one opening. */
  get(): Promise<T>;
  /** Forgets `connection` when it is still the current one and closes it: the next `get()` opens another. */
  drop(connection: T): Promise<void>;
  /** Closes the connection, if one is open or opening, and refuses any later `get()`. */
  close(): Promise<void>;
}

export interface LazyConnectionOptions<T> {
  /** Opens and checks one connection; rejects with an error the sink can throw as it is. */
  open: () => Promise<T>;
  /** Closes one connection; an error here is ignored, as the connection is given up either way. */
  close: (connection: T) => Promise<void> | void;
}

export function lazyConnection<T>({ open, close }: LazyConnectionOptions<T>): LazyConnection<T> {
  let closed = false;

  const shut = async (connection: T) => {
    try {
      await close(connection);
    } catch {
      // Given up either way: a connection that cannot even close is no use to the next delivery.
    }
  };

  const connection = lazyValue(async () => {
    const opened = await open();
    // close() ran while this one was opening: nobody will ever close it but us.
    if (closed) {
      await shut(opened);
      throw new Error('the sink is closed');
    }
    return opened;
  });

  return {
    get() {
      if (closed) return Promise.reject(new Error('the sink is closed'));
      return connection.get();
    },
    async drop(dropped) {
      connection.forget(dropped);
      await shut(dropped);
    },
    async close() {
      closed = true;
      const current = connection.current();
      connection.reset();
      if (current !== undefined) await shut(current);
    },
  };
}

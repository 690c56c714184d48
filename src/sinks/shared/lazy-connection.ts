/**
 * The connection of a sink whose service may be down (contract section 9): none is opened by `create()`, so a
 * service that is unreachable at start-up does not stop start-up; the first delivery opens it, later ones reuse it,
 * and one that failed is forgotten, so the next delivery opens another. The deliveries' own retry schedule does the
 * waiting in between (src/delivery/backoff.ts), never the client library.
 */

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
  let opening: Promise<T> | undefined;
  let current: T | undefined;
  let closed = false;

  const shut = async (connection: T) => {
    try {
      await close(connection);
    } catch {
      // Given up either way: a connection that cannot even close is no use to the next delivery.
    }
  };

  return {
    get() {
      if (closed) return Promise.reject(new Error('the sink is closed'));
      if (opening) return opening;
      const attempt = open().then(
        async (connection) => {
          // close() ran while this one was opening: nobody will ever close it but us.
          if (closed) {
            await shut(connection);
            throw new Error('the sink is closed');
          }
          if (opening === attempt) current = connection;
          return connection;
        },
        (err: unknown) => {
          if (opening === attempt) opening = undefined;
          throw err;
        },
      );
      opening = attempt;
      return attempt;
    },
    async drop(connection) {
      if (current === connection) {
        current = undefined;
        opening = undefined;
      }
      await shut(connection);
    },
    async close() {
      closed = true;
      const connection = current;
      opening = undefined;
      current = undefined;
      if (connection !== undefined) await shut(connection);
    },
  };
}

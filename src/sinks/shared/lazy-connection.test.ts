import { describe, expect, it } from 'vitest';
import { lazyConnection, lazyValue } from './lazy-connection.js';

/** Connections numbered in the order they were opened; `failNext` makes the next opening reject. */
function counter() {
  const opened: number[] = [];
  const closed: number[] = [];
  let failNext = false;
  const connections = lazyConnection<number>({
    open: async () => {
      if (failNext) {
        failNext = false;
        throw new Error('connection refused');
      }
      opened.push(opened.length + 1);
      return opened.length;
    },
    close: (n) => {
      closed.push(n);
    },
  });
  return { connections, opened, closed, failNextOpen: () => (failNext = true) };
}

describe('lazyConnection', () => {
  it('opens nothing until asked, then one connection for callers that ask at once, reused after', async () => {
    const { connections, opened } = counter();
    expect(opened).toEqual([]);
    expect(await Promise.all([connections.get(), connections.get(), connections.get()])).toEqual([1, 1, 1]);
    expect(await connections.get()).toBe(1);
    expect(opened).toEqual([1]);
  });

  it('opens again after an opening failed, and after the connection was dropped', async () => {
    const { connections, closed, failNextOpen } = counter();
    failNextOpen();
    await expect(connections.get()).rejects.toThrow('connection refused');
    expect(await connections.get()).toBe(1);
    await connections.drop(1);
    expect(closed).toEqual([1]);
    expect(await connections.get()).toBe(2);
  });

  it('drops a stale connection without forgetting the current one', async () => {
    const { connections, closed } = counter();
    await connections.get();
    await connections.drop(1);
    await connections.get();
    await connections.drop(1); // a second failure report about the first connection
    expect(await connections.get()).toBe(2);
    expect(closed).toEqual([1, 1]);
  });

  it('closes the open connection and refuses to open another', async () => {
    const { connections, closed, opened } = counter();
    await connections.get();
    await connections.close();
    expect(closed).toEqual([1]);
    await expect(connections.get()).rejects.toThrow('closed');
    expect(opened).toEqual([1]);
  });

  it('closes a connection that was still opening when the sink closed', async () => {
    const { connections, closed } = counter();
    const opening = connections.get();
    await connections.close();
    await expect(opening).rejects.toThrow('closed');
    expect(closed).toEqual([1]);
  });
});

describe('lazyValue', () => {
  it('makes one value for callers that ask at once, keeps no failure, and makes another once the current one is forgotten', async () => {
    let made = 0;
    let fail = true;
    const value = lazyValue(async () => {
      if (fail) {
        fail = false;
        throw new Error('table lookup failed');
      }
      return ++made;
    });
    await expect(value.get()).rejects.toThrow('table lookup failed');
    expect(await Promise.all([value.get(), value.get()])).toEqual([1, 1]);
    expect(value.current()).toBe(1);
    value.forget(1);
    expect(value.current()).toBeUndefined();
    expect(await value.get()).toBe(2);
    value.forget(1); // a stale report about the first
    expect(await value.get()).toBe(2);
  });
});

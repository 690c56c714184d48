import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { exitOnShutdown, RELAY_WINDOW_MS, type ShutdownHost, within } from './shutdown.js';

/** The process as the module sees it: signals and errors are emitted by hand, the clock is moved by hand. */
function standIn() {
  const events = new EventEmitter();
  const exits: number[] = [];
  let written = '';
  let clock = 0;
  const host: ShutdownHost = {
    on: (event, listener) => events.on(event, listener),
    removeListener: (event, listener) => events.removeListener(event, listener),
    exit: (code) => void exits.push(code),
    write: (text) => void (written += text),
    now: () => clock,
  };
  return {
    host,
    exits,
    written: () => written,
    emit: (event: string, value: unknown = event) => events.emit(event, value),
    advance: (ms: number) => void (clock += ms),
    listeners: () => events.eventNames().length,
  };
}

/** A drain the test ends: `finish()` resolves it, `fail(err)` rejects it. */
function heldDrain() {
  let runs = 0;
  let finish = () => {};
  let fail: (err: Error) => void = () => {};
  const drain = () => {
    runs++;
    return new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return { drain, runs: () => runs, finish: () => finish(), fail: (err: Error) => fail(err) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('exitOnShutdown', () => {
  it('drains once on the first SIGTERM and exits 0 when the drain ends', async () => {
    const p = standIn();
    const d = heldDrain();
    exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('SIGTERM');
    expect(p.written()).toBe('callhook: SIGTERM received, draining\n');
    expect(d.runs()).toBe(1);
    await settle();
    expect(p.exits).toEqual([]);
    d.finish();
    await settle();
    expect(p.exits).toEqual([0]);
  });

  it('takes copies of that signal within the relay window as the same request (npm forwards, tsx relays)', async () => {
    const p = standIn();
    const d = heldDrain();
    exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('SIGTERM');
    p.advance(3);
    p.emit('SIGTERM');
    p.advance(RELAY_WINDOW_MS - 4);
    p.emit('SIGTERM');
    expect(d.runs()).toBe(1);
    expect(p.exits).toEqual([]);
    expect(p.written()).toBe('callhook: SIGTERM received, draining\n');
    d.finish();
    await settle();
    expect(p.exits).toEqual([0]);
  });

  it('forces the exit with 1 on the same signal after the window, saying the drain was cut short', () => {
    const p = standIn();
    const d = heldDrain();
    exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('SIGINT');
    p.advance(RELAY_WINDOW_MS);
    p.emit('SIGINT');
    expect(p.exits).toEqual([1]);
    expect(p.written().split('\n')[1]).toBe(
      'callhook: second SIGINT; the drain was cut short: deliveries in flight go back to pending when their lease expires',
    );
  });

  it('forces the exit on another signal at once: only copies of the first are relays', () => {
    const p = standIn();
    exitOnShutdown({ drain: heldDrain().drain, host: p.host });
    p.emit('SIGTERM');
    p.advance(10);
    p.emit('SIGINT');
    expect(p.exits).toEqual([1]);
    expect(p.written()).toContain('callhook: second SIGINT; the drain was cut short');
  });

  it('exits 1 with the reason when the drain fails or outlasts its bound', async () => {
    const p = standIn();
    const d = heldDrain();
    exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('SIGTERM');
    d.fail(new Error('the drain still running after 15 s'));
    await settle();
    expect(p.exits).toEqual([1]);
    expect(p.written()).toContain(
      'callhook: the drain still running after 15 s; the drain was cut short: deliveries in flight go back',
    );
  });

  it('on an error nothing caught: prints its stack, drains and exits 1; a second error exits at once', async () => {
    const p = standIn();
    const d = heldDrain();
    exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('uncaughtException', new Error('boom'));
    expect(p.written()).toMatch(/^callhook: Error: boom\n {4}at /);
    expect(d.runs()).toBe(1);
    d.finish();
    await settle();
    expect(p.exits).toEqual([1]);

    const q = standIn();
    exitOnShutdown({ drain: heldDrain().drain, host: q.host });
    q.emit('SIGTERM');
    q.emit('unhandledRejection', new Error('late'));
    expect(q.exits).toEqual([1]);
    expect(q.written()).toContain('callhook: an error while draining; the drain was cut short');
  });

  it('once uninstalled hears nothing, and a drain under way ends no process (a start-up that failed does)', async () => {
    const p = standIn();
    const d = heldDrain();
    const shutdown = exitOnShutdown({ drain: d.drain, host: p.host });
    p.emit('SIGTERM');
    shutdown.uninstall();
    expect(p.listeners()).toBe(0);
    d.fail(new Error('cannot open the store'));
    await settle();
    expect(p.exits).toEqual([]);
  });
});

describe('within', () => {
  it('passes on what settles in time, and rejects naming what did not', async () => {
    await expect(within(Promise.resolve(7), 50, 'fast')).resolves.toBe(7);
    await expect(within(new Promise(() => {}), 20, 'the drain')).rejects.toThrow(
      'the drain still running after 0.02 s',
    );
  });
});

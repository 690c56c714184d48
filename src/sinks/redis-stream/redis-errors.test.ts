import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { classify } from '../errors.js';
import { errorCode, redisError } from './redis-errors.js';

const where = 'Redis at 127.0.0.1:6379';
const reply = (message: string): Error => new ReplyError(message) as Error;
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
const kind = (err: unknown, lastError?: Error) => classify(redisError(err, where, lastError)).kind;

describe('redis-stream error classification', () => {
  it('reads the code of a reply error, and none of a failure without a reply', () => {
    expect(
      errorCode(
        reply('WRONGTYPE Operation against a key holding the wrong kind of value script: abc, on @user_script:13.'),
      ),
    ).toBe('WRONGTYPE');
    expect(errorCode(reply("OOM command not allowed when used memory > 'maxmemory'."))).toBe('OOM');
    expect(errorCode(refused())).toBeUndefined();
    expect(errorCode(new Error('WRONGTYPE said by something else'))).toBeUndefined();
  });

  it('gives up at once on what fails the same way every time: a stream key of another type, refused credentials, ACL, Cluster', () => {
    for (const message of [
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'NOAUTH Authentication required.',
      'WRONGPASS invalid username-password pair or user is disabled.',
      "NOPERM User callhook has no permissions to run the 'xadd' command",
      'MOVED 1234 10.0.0.2:6379',
      "CROSSSLOT Keys in request don't hash to the same slot",
    ]) {
      expect(kind(reply(message)), message).toBe('permanent');
    }
  });

  it('tries again what may pass later: memory full, loading, a busy script, a replica during failover, codes it does not know', () => {
    for (const message of [
      "OOM command not allowed when used memory > 'maxmemory'.",
      'LOADING Redis is loading the dataset in memory',
      'BUSY Redis is busy running a script.',
      "READONLY You can't write against a read only replica.",
      'MASTERDOWN Link with MASTER is down',
      'NOSCRIPT No matching script. Please use EVAL.',
      'ERR max number of clients reached',
    ]) {
      expect(kind(reply(message)), message).toBe('retry');
    }
  });

  it('tries again a connection refused, reset, timed out or closed, and says why it closed', () => {
    expect(kind(refused())).toBe('retry');
    expect(kind(Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' }))).toBe('retry');
    const closed = redisError(new Error('Connection is closed.'), where, refused());
    expect(classify(closed).kind).toBe('retry');
    expect(closed.message).toBe('Redis at 127.0.0.1:6379: Connection is closed. (connect ECONNREFUSED 127.0.0.1:6379)');
  });

  it("takes a refused password from the connection's error event, when connect() says only that it closed", () => {
    const err = redisError(
      new Error('Connection is closed.'),
      where,
      reply('WRONGPASS invalid username-password pair or user is disabled.'),
    );
    expect(classify(err)).toMatchObject({
      kind: 'permanent',
      error: `${where}: the server refused the url's user name or password: WRONGPASS invalid username-password pair or user is disabled.`,
    });
  });

  it("keeps the server's first line of an error raised in the script, and names what to do about it", () => {
    const err = redisError(
      reply(
        'WRONGTYPE Operation against a key holding the wrong kind of value script: 1f2e, on @user_script:13.\nmore',
      ),
      where,
    );
    expect(err.message).toMatch(
      /^Redis at 127\.0\.0\.1:6379: the stream's key or a marker holds another type of value \(rename or delete it.*\): WRONGTYPE Operation .* on @user_script:13\.$/,
    );
    expect(err.cause).toBeInstanceOf(Error);
  });
});

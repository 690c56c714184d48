import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createOutput, OutputClosed, watchStdout } from './output.js';

/** A stdout whose reader takes `accepted` writes and then goes away (EPIPE), or fails with `code` instead. */
function stdout({ accepted = 0, code = 'EPIPE' } = {}) {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (written.length < accepted) {
        written.push(chunk.toString());
        done();
      } else done(Object.assign(new Error(`write ${code}`), { code }));
    },
  });
  stream.on('error', () => {}); // the process's listener, watchStdout, in index.ts
  return { stream, written };
}

describe("a run's standard output", () => {
  it('writes, and resolves once the text is handed on', async () => {
    const { stream, written } = stdout({ accepted: 2 });
    const out = createOutput(stream);
    await out.write('one\n');
    out.print('two');
    expect(written).toEqual(['one\n', 'two\n']);
  });

  it('once the reader has gone, every write throws OutputClosed and every print is dropped', async () => {
    const { stream, written } = stdout({ accepted: 1 });
    const out = createOutput(stream);
    await out.write('kept\n');
    await expect(out.write('lost\n')).rejects.toBeInstanceOf(OutputClosed);
    await expect(out.write('never\n')).rejects.toBeInstanceOf(OutputClosed);
    out.print('dropped');
    expect(written).toEqual(['kept\n']);
  });

  it('learns that the reader has gone from a print too, and stops the next write', async () => {
    const { stream } = stdout();
    const out = createOutput(stream);
    out.print('into a closed pipe');
    await new Promise((resolve) => setImmediate(resolve));
    await expect(out.write('next\n')).rejects.toBeInstanceOf(OutputClosed);
  });

  it('is a failure, not a closed pipe, when the write fails otherwise (a full disk)', async () => {
    const out = createOutput(stdout({ code: 'ENOSPC' }).stream);
    await expect(out.write('x\n')).rejects.toMatchObject({ code: 'ENOSPC' });
  });

  it("is each run's own: a run after one whose reader went away starts open", async () => {
    await expect(createOutput(stdout().stream).write('x\n')).rejects.toBeInstanceOf(OutputClosed);
    const { stream, written } = stdout({ accepted: 1 });
    await createOutput(stream).write('y\n');
    expect(written).toEqual(['y\n']);
  });
});

describe('watchStdout, for the process', () => {
  it('leaves a closed pipe to the run, and hands any other error on', () => {
    const stream = new EventEmitter() as unknown as NodeJS.WritableStream;
    const errors: string[] = [];
    watchStdout(stream, (err) => errors.push(err.message));
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    stream.emit('error', Object.assign(new Error('write ENOSPC'), { code: 'ENOSPC' }));
    expect(errors).toEqual(['write ENOSPC']);
  });
});

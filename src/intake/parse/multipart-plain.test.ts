import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_BODY_LIMITS } from './body-limits.js';
import { readPlainMultipart } from './multipart-plain.js';
import { parseBody } from './parse-body.js';
import { groupFields } from './parse-query.js';

/** The plain-shape reader gives what busboy gives, or steps aside; it never gives something else. */

const part = (boundary: string, name: string, value: string | Buffer) =>
  Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`),
    Buffer.from(value),
    Buffer.from('\r\n'),
  ]);
const form = (boundary: string, fields: [string, string | Buffer][], end = `--${boundary}--\r\n`) =>
  Buffer.concat([...fields.map(([n, v]) => part(boundary, n, v)), Buffer.from(end)]);
const read = (body: Buffer, boundary = 'XyZ', limits = DEFAULT_BODY_LIMITS) =>
  readPlainMultipart(body, boundary, limits);

describe('readPlainMultipart', () => {
  it("reads the sender's shape: one Content-Disposition header a part, UTF-8 text", () => {
    const body = form('XyZ', [
      ['first_name', 'आशा'],
      ['call_summary', 'line one\r\nline two -- XyZ'],
      ['first_name', ''],
    ]);
    expect(read(body)).toEqual([
      ['first_name', 'आशा'],
      ['call_summary', 'line one\r\nline two -- XyZ'],
      ['first_name', ''],
    ]);
    expect(read(form('XyZ', []))).toEqual([]);
    expect(read(Buffer.concat([form('XyZ', [['a', '1']]), Buffer.from('epilogue')]))).toEqual([['a', '1']]);
  });

  it('steps aside for everything else, so busboy reads it as before', () => {
    const cases: [string, Buffer][] = [
      ['a preamble', Buffer.concat([Buffer.from('preamble\r\n'), form('XyZ', [['a', '1']])])],
      [
        'padding after a delimiter',
        Buffer.from('--XyZ \r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XyZ--'),
      ],
      [
        'a second header',
        Buffer.from(
          '--XyZ\r\nContent-Disposition: form-data; name="a"\r\nContent-Type: text/plain; charset=latin1\r\n\r\n1\r\n--XyZ--',
        ),
      ],
      [
        'a file',
        Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"; filename="x.txt"\r\n\r\n1\r\n--XyZ--'),
      ],
      ['an escaped name', Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a\\"b"\r\n\r\n1\r\n--XyZ--')],
      ['no final delimiter', form('XyZ', [['a', '1']], '')],
      ['a truncated part', Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1')],
      ['invalid UTF-8', form('XyZ', [['a', Buffer.from([0xc3, 0x28])]])],
      ['no headers', Buffer.from('--XyZ\r\n\r\n1\r\n--XyZ--')],
    ];
    for (const [what, body] of cases) expect(read(body), what).toBeUndefined();
    expect(read(form('XyZ', [['a', '1']]), 'not a boundary\u00e9')).toBeUndefined();
    expect(
      read(
        form('XyZ', [
          ['a', '1'],
          ['b', '2'],
        ]),
        'XyZ',
        { fields: 1, fieldSize: 10, parts: 10 },
      ),
    ).toBeUndefined();
    expect(read(form('XyZ', [['a', '12345']]), 'XyZ', { fields: 10, fieldSize: 4, parts: 10 })).toBeUndefined();
    expect(read(form('XyZ', [['a', '1234']]), 'XyZ', { fields: 10, fieldSize: 4, parts: 10 })).toEqual([['a', '1234']]);
  });

  const boundary = fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=?]{1,40}$/);
  // Mostly names as the dashboard allows them, and any text at all, which the plain reader often leaves to busboy.
  const name = fc.oneof(
    { arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), weight: 1 },
  );
  // Text, the sequences a delimiter is made of, and now and then raw bytes that are seldom UTF-8.
  const value = fc.oneof(
    { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 4 },
    { arbitrary: fc.constantFrom('', '--', '\r\n', '\r\n--', ' ', 'order placed'), weight: 2 },
    { arbitrary: fc.uint8Array({ maxLength: 16 }).map((bytes) => Buffer.from(bytes)), weight: 1 },
  );

  it('gives exactly what busboy gives whenever it reads a body (10,000 generated forms)', async () => {
    let plainRead = 0;
    await fc.assert(
      fc.asyncProperty(boundary, fc.array(fc.tuple(name, value), { maxLength: 8 }), async (b, fields) => {
        const body = form(b, fields);
        const contentType = `multipart/form-data; boundary="${b}"`;
        const plain = readPlainMultipart(body, b, DEFAULT_BODY_LIMITS);
        const viaBusboy = await parseBody(body, contentType, { busboyOnly: true }).then(
          (r) => r.fields,
          (err: Error) => err,
        );
        if (plain === undefined) return;
        plainRead++;
        expect(viaBusboy).toEqual(groupFields(plain));
        expect((await parseBody(body, contentType)).fields).toEqual(viaBusboy);
      }),
      { numRuns: 10_000 },
    );
    // The comparison means something only if the plain reader took most of the generated forms.
    expect(plainRead).toBeGreaterThan(5_000);
  });
});

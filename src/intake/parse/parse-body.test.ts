import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallhookError } from '../../errors.js';
import type { BodyLimits } from './body-limits.js';
import { parseBody } from './parse-body.js';

const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const JSON_CT = 'application/json';
const FORM_CT = 'application/x-www-form-urlencoded';
const NAMES = { नाम: 'आशा देवी', பெயர்: 'தமிழ்செல்வி', '🙂': '👍🏽 ok' };

interface PartSpec {
  name?: string;
  value: string | Uint8Array;
  filename?: string;
  headers?: string[];
}

/** A multipart/form-data body as RFC 7578 section 4.1 lays it out, built by hand so tests can also break it. */
function multipart(boundary: string, parts: PartSpec[], end = `--${boundary}--\r\n`): Uint8Array {
  const chunks = parts.flatMap(({ name, value, filename, headers = [] }) => {
    const disposition = ['form-data', ...(name === undefined ? [] : [`name="${name}"`])];
    if (filename !== undefined) disposition.push(`filename="${filename}"`);
    const head = [`--${boundary}`, `Content-Disposition: ${disposition.join('; ')}`, ...headers, '', ''];
    return [Buffer.from(head.join('\r\n')), Buffer.from(value), Buffer.from('\r\n')];
  });
  return new Uint8Array(Buffer.concat([...chunks, Buffer.from(end)]));
}
const MP_CT = 'multipart/form-data; boundary=XyZ';
// toEqual compares own keys, and a `__proto__` own key cannot be written in an object literal.
const withProto = (f: object, proto: unknown) => Object.fromEntries([...Object.entries(f), ['__proto__', proto]]);
const mp = (parts: PartSpec[]) => multipart('XyZ', parts);

async function expectRefused(body: Uint8Array, ct: string | undefined, status: number, message: RegExp, options = {}) {
  const error = await parseBody(body, ct, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CallhookError);
  const { status: actual, message: text } = error as CallhookError;
  expect([actual, text]).toEqual([status, expect.stringMatching(message)]);
  return error as CallhookError;
}

describe('no body', () => {
  it.each([undefined, JSON_CT, 'text/plain', MP_CT])('is "none" for an empty or blank body (%s)', async (ct) => {
    expect(await parseBody(new Uint8Array(), ct)).toEqual({ encoding: 'none', fields: {} });
    expect(await parseBody(bytes(' \r\n\t '), ct, {})).toEqual({ encoding: 'none', fields: {} });
  });
});

describe('content types', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON; Charset="UTF-8"',
    'application/json;charset=us-ascii',
    'application/vnd.x+json',
    undefined,
    '',
  ])('reads JSON under %s', async (ct) => {
    expect(await parseBody(bytes('{"a":1,"b":"x"}'), ct, {})).toMatchObject({
      encoding: 'json',
      fields: { a: 1, b: 'x' },
    });
  });

  it('refuses a body without Content-Type that is not JSON with 415', async () => {
    const error = await expectRefused(bytes('a=1&b=2'), undefined, 415, /no Content-Type, and the body is not JSON/);
    expect(error.cause).toBeInstanceOf(CallhookError);
    await expectRefused(new Uint8Array([0xff, 0xfe]), undefined, 415, /not JSON/);
  });

  it.each([
    ['text/plain', /Unsupported content type.*: text\/plain$/],
    ['application/xml; charset=utf-8', /application\/xml/],
    ['application/json; charset=iso-8859-1', /charset "iso-8859-1"/],
    [`${FORM_CT}; charset=Windows-1252`, /charset "Windows-1252"/],
    ['not a type', /unreadable Content-Type "not a type"/],
  ])('refuses %s with 415', async (ct, message) => {
    expect((await expectRefused(bytes('{"a":1}'), ct, 415, message)).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('JSON', () => {
  it('keeps the parser message and cause for broken JSON', async () => {
    const error = await expectRefused(bytes('{"a":'), JSON_CT, 400, /broken JSON: .*JSON/);
    expect([error.code, error.cause instanceof SyntaxError]).toEqual(['BAD_BODY', true]);
  });

  it.each(['[1,2]', 'null', '42', '"text"'])('refuses %s: not an object', async (text) => {
    await expectRefused(bytes(text), JSON_CT, 400, /JSON body must be an object/);
  });

  it('refuses invalid UTF-8, and drops a leading BOM', async () => {
    await expectRefused(new Uint8Array([0x7b, 0x22, 0xc3, 0x22, 0x3a, 0x31, 0x7d]), JSON_CT, 400, /invalid UTF-8/);
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...bytes('{"a":1}')]);
    expect((await parseBody(bom, JSON_CT)).fields).toEqual({ a: 1 });
  });

  it('reads unicode names and keeps __proto__ a plain own key', async () => {
    expect((await parseBody(bytes(JSON.stringify(NAMES)), JSON_CT)).fields).toEqual(NAMES);
    const { fields } = await parseBody(bytes('{"__proto__":{"polluted":1},"constructor":"y"}'), JSON_CT);
    expect(Object.getOwnPropertyDescriptor(fields, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('form', () => {
  it('reads + and %20 as spaces, unicode, repeated keys and odd keys as own properties', async () => {
    const body = `name=Asha+Rao&city=New%20Delhi&${new URLSearchParams(NAMES)}&tag=a&tag=b&__proto__=x&constructor=y`;
    const { encoding, fields } = await parseBody(bytes(body), FORM_CT);
    expect(encoding).toBe('form');
    const expected = { name: 'Asha Rao', city: 'New Delhi', ...NAMES, tag: ['a', 'b'], constructor: 'y' };
    expect(fields).toEqual(withProto(expected, 'x'));
    expect(Object.getOwnPropertyDescriptor(fields, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
  });

  it.each([
    ['%FF', bytes('name=%FF'), /invalid percent-encoding in "%FF"/],
    ['a cut sequence', bytes('name=%E2%82'), /invalid percent-encoding/],
    ['a raw byte that is not UTF-8', new Uint8Array([0x61, 0x3d, 0xff]), /invalid UTF-8/],
  ])('refuses %s with 400', async (_, body, message) => {
    expect((await expectRefused(body, FORM_CT, 400, message)).cause).toBeDefined();
  });

  it('applies the field count and size limits (413)', async () => {
    const limits: BodyLimits = { fields: 2, fieldSize: 3, parts: 2 };
    expect((await parseBody(bytes('a=123&b=x'), FORM_CT, { limits })).fields).toEqual({ a: '123', b: 'x' });
    await expectRefused(bytes('a=1&b=2&c=3'), FORM_CT, 413, /more than 2 fields/, { limits });
    await expectRefused(bytes('a=1234'), FORM_CT, 413, /field "a" is longer than 3 bytes/, { limits });
  });
});

describe('multipart', () => {
  it('reads fields, unicode names, repeated keys and odd keys as own properties', async () => {
    const odd: [string, string][] = [
      ['tag', 'a'],
      ['__proto__', 'x'],
      ['tag', 'b'],
      ['empty', ''],
    ];
    const parts = [...Object.entries(NAMES), ...odd];
    const result = await parseBody(mp(parts.map(([name, value]) => ({ name, value }))), MP_CT);
    const fields = withProto({ ...NAMES, tag: ['a', 'b'], empty: '' }, 'x');
    expect(result).toEqual({ encoding: 'multipart', fields });
    expect(Object.getOwnPropertyDescriptor(result.fields, '__proto__')?.value).toBe('x');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('reads a quoted boundary with characters a token cannot hold', async () => {
    const boundary = "----=_Part 1;'x'";
    const body = multipart(boundary, [{ name: 'a', value: '1' }]);
    expect((await parseBody(body, `multipart/form-data; boundary="${boundary}"`)).fields).toEqual({ a: '1' });
  });

  it.each([
    ['no boundary', 'multipart/form-data', /without a boundary/],
    ['an empty boundary', 'multipart/form-data; boundary=""', /without a boundary/],
    ['another boundary', 'multipart/form-data; boundary=other', /broken multipart: Unexpected end of form/],
  ])('refuses a body with %s (400)', async (_, ct, message) => {
    await expectRefused(mp([{ name: 'a', value: '1' }]), ct, 400, message);
  });

  it('refuses a truncated or malformed body (400)', async () => {
    const whole = mp([{ name: 'a', value: '1' }]);
    await expectRefused(whole.subarray(0, whole.length - 10), MP_CT, 400, /Unexpected end of form/);
    await expectRefused(bytes('--XyZ\r\nno header line\r\n\r\n1\r\n--XyZ--'), MP_CT, 400, /broken multipart/);
    await expectRefused(mp([{ value: '1' }]), MP_CT, 400, /a part has no name/);
  });

  it('refuses bytes that are not UTF-8 in a value or a name (400)', async () => {
    const bad = new Uint8Array([0x61, 0xe2, 0x82]);
    await expectRefused(mp([{ name: 'a', value: bad }]), MP_CT, 400, /invalid UTF-8 in field "a"/);
    const badName = Buffer.concat([
      Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="'),
      Buffer.from([0xff]),
      Buffer.from('"\r\n\r\n1\r\n--XyZ--'),
    ]);
    await expectRefused(new Uint8Array(badName), MP_CT, 400, /invalid UTF-8 in a part name/);
  });

  it('honours a charset a part declares itself (RFC 7578 section 4.4)', async () => {
    const utf8 = ['Content-Type: text/plain; charset=UTF-8'];
    const parts = [
      { name: 'a', value: 'José', headers: utf8 },
      { name: 'b', value: 'नाम' },
    ];
    expect((await parseBody(mp(parts), MP_CT)).fields).toEqual({ a: 'José', b: 'नाम' });
    const bad = mp([{ name: 'a', value: new Uint8Array([0x4a, 0xe9]), headers: utf8 }]);
    await expectRefused(bad, MP_CT, 400, /invalid UTF-8 in field "a"/);
    const koi8 = mp([{ name: 'a', value: 'x', headers: ['Content-Type: text/plain; charset=koi8-r'] }]);
    await expectRefused(koi8, MP_CT, 415, /part "a" declares a charset other than utf-8/);
  });

  it('refuses a file part unless the hook allows files', async () => {
    const doc = { name: 'doc', filename: 'नोट.txt', value: 'hi\xff', headers: ['Content-Type: text/plain'] };
    const body = mp([{ name: 'a', value: '1' }, doc]);
    const error = await expectRefused(body, MP_CT, 415, /part "doc" is a file/);
    expect(error.code).toBe('FILE_PART');
    const octets = mp([{ name: 'blob', value: 'x', headers: ['Content-Type: application/octet-stream'] }]);
    await expectRefused(octets, MP_CT, 415, /is a file/);
    const { fields } = await parseBody(body, MP_CT, { allowFiles: true });
    const base64 = Buffer.from('hi\xff').toString('base64');
    expect(fields).toEqual({ a: '1', doc: { filename: 'नोट.txt', content_type: 'text/plain', size: 4, base64 } });
  });

  it('applies the fields, fieldSize, parts and files limits (413)', async () => {
    const limits: BodyLimits = { fields: 2, fieldSize: 3, parts: 3 };
    const two = [
      { name: 'a', value: '123' },
      { name: 'b', value: 'ॐ' },
    ];
    expect((await parseBody(mp(two), MP_CT, { limits })).fields).toEqual({ a: '123', b: 'ॐ' });
    await expectRefused(mp([...two, { name: 'c', value: '' }]), MP_CT, 413, /more than 2 fields/, { limits });
    await expectRefused(mp([{ name: 'a', value: 'ॐx' }]), MP_CT, 413, /"a" is longer than 3 bytes/, { limits });
    const file = { name: 'f', filename: 'f.txt', value: 'x' };
    const allow = { limits, allowFiles: true };
    expect(Object.keys((await parseBody(mp([...two, file]), MP_CT, allow)).fields)).toEqual(['a', 'b', 'f']);
    await expectRefused(mp([...two, file, file]), MP_CT, 413, /more than 3 parts/, allow);
    await expectRefused(mp([file, file, file, file]), MP_CT, 413, /more than 3 files/, allow);
  });
});

describe('properties: any input resolves or is refused with 400, 413 or 415, and never hangs', () => {
  const within = async <T>(promise: Promise<T>) => {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('hung')), 2000)));
    return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
  };
  const settles = async (body: Uint8Array, ct: string | undefined, options: object) => {
    try {
      await within(parseBody(body, ct, options));
    } catch (error) {
      expect(error).toBeInstanceOf(CallhookError);
      expect([400, 413, 415]).toContain((error as CallhookError).status);
    }
  };
  const boundary = fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=? ]{1,70}$/);
  const options = fc.record({
    allowFiles: fc.boolean(),
    limits: fc.record({ fields: fc.nat(4), fieldSize: fc.nat(8), parts: fc.nat(4) }),
  });
  const content = fc.oneof(
    fc.uint8Array(),
    fc.string({ unit: 'binary' }).map(bytes),
    fc.jsonValue().map((v) => bytes(JSON.stringify(v))),
  );
  const contentType = fc.oneof(
    fc.constantFrom(undefined, JSON_CT, FORM_CT, MP_CT, 'text/plain', 'multipart/form-data; boundary=""'),
    fc.string(),
  );
  const part = fc.record({
    name: fc.option(
      fc.string({ unit: 'grapheme' }).filter((n) => !/["\r\n]/.test(n)),
      { nil: undefined },
    ),
    value: fc.oneof(fc.string({ unit: 'grapheme' }), fc.uint8Array()),
    filename: fc.option(fc.constantFrom('a.txt', 'न.pdf'), { nil: undefined }),
    headers: fc.subarray(['Content-Type: text/plain; charset=utf-8', 'Content-Type: application/octet-stream']),
  });
  const multipartBody = fc
    .tuple(boundary, fc.array(part, { maxLength: 6 }), fc.nat(), fc.boolean())
    .map(([b, parts, cut, truncate]) => {
      const body = multipart(b, parts);
      const ct = `multipart/form-data; boundary="${b}"`;
      return [truncate ? body.subarray(0, cut % (body.length + 1)) : body, ct] as const;
    });

  it('holds for random bytes and strings under every content type', async () => {
    await fc.assert(fc.asyncProperty(content, contentType, options, settles), { numRuns: 3000 });
  }, 120_000);

  it('holds for multipart bodies with random boundaries, parts and cuts', async () => {
    const run = fc.asyncProperty(multipartBody, options, ([body, ct], opts) => settles(body, ct, opts));
    await fc.assert(run, { numRuns: 3000 });
  }, 120_000);
});

describe('deeply nested JSON', () => {
  it('is refused past the depth limit, counting brackets inside strings as text', async () => {
    const nested = (n: number) => `{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    await expect(parseBody(new TextEncoder().encode(nested(64)), 'application/json')).resolves.toMatchObject({
      encoding: 'json',
    });
    await expect(parseBody(new TextEncoder().encode(nested(65)), 'application/json')).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('nested 65 levels deep'),
    });
    await expect(parseBody(new TextEncoder().encode(nested(100_000)), 'application/json')).rejects.toMatchObject({
      status: 400,
    });
    const inString = `{"a":"${'['.repeat(500)}\\"${'{'.repeat(500)}"}`;
    await expect(parseBody(new TextEncoder().encode(inString), 'application/json')).resolves.toMatchObject({
      fields: { a: `${'['.repeat(500)}"${'{'.repeat(500)}` },
    });
  });

  it('takes many shallow brackets side by side, and one deep run among them is still refused', async () => {
    // More opening brackets than the limit, so the depth is walked rather than bounded by their count.
    const wide = `{"rows":[${Array.from({ length: 200 }, (_, i) => `{"n":[${i}]}`).join(',')}]}`;
    const parsed = await parseBody(new TextEncoder().encode(wide), 'application/json');
    expect((parsed.fields.rows as unknown[]).length).toBe(200);
    const deep = `{"rows":[${'{"n":[1]},'.repeat(100)}${'['.repeat(70)}${']'.repeat(70)}]}`;
    await expect(parseBody(new TextEncoder().encode(deep), 'application/json')).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('nested 65 levels deep'),
    });
  });
});

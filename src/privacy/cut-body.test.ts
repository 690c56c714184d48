import { describe, expect, it } from 'vitest';
import { cutBody, cutFormPair, cutJsonMember } from './cut-body.js';

describe('cutting a field out of a body as received (docs/reference.md#retention)', () => {
  it('cuts a JSON member, keeping every other byte, numbers and spacing included', () => {
    expect(cutJsonMember('b', '{"a":1,"b":"x","c":12345678901234567890}')).toEqual({
      text: '{"a":1,"c":12345678901234567890}',
    });
    const pretty = '{\n  "a": 1.0,\n  "b": {"nested": ["}", "\\""]},\n  "c": true\n}\n';
    expect(cutJsonMember('b', pretty)).toEqual({ text: '{\n  "a": 1.0,\n  "c": true\n}\n' });
    expect(cutJsonMember('a', pretty)).toEqual({ text: '{\n  "b": {"nested": ["}", "\\""]},\n  "c": true\n}\n' });
    expect(cutJsonMember('c', pretty)).toEqual({ text: '{\n  "a": 1.0,\n  "b": {"nested": ["}", "\\""]}\n}\n' });
  });

  it('cuts every member of that name, however its key is escaped, and leaves nested ones', () => {
    expect(cutJsonMember('url', '{"url":"a","x":{"url":"keep"},"u\\u0072l":"b"}')).toEqual({
      text: '{"x":{"url":"keep"}}',
    });
    expect(cutJsonMember('only', ' { "only" : null } ')).toEqual({ text: ' {} ' });
  });

  it('says unchanged when the member is not there, and drop when the text is not one JSON object', () => {
    expect(cutJsonMember('z', '{"a":1}')).toBe('unchanged');
    expect(cutJsonMember('a', '[{"a":1}]')).toBe('drop');
    expect(cutJsonMember('a', '{"a":1')).toBe('drop');
    expect(cutJsonMember('a', '{"a":1} trailing')).toBe('drop');
    expect(cutJsonMember('a', '{"a":tru,"b":2}')).toBe('drop');
  });

  it('cuts form pairs by their decoded name, the other pairs as written', () => {
    expect(cutFormPair('recording_url', 'a=1&recording%5Furl=https%3A%2F%2Fr&b=caf%C3%A9&recording_url=x')).toEqual({
      text: 'a=1&b=caf%C3%A9',
    });
    expect(cutFormPair('a', '?a=1&b=2')).toEqual({ text: '?b=2' });
    expect(cutFormPair('a', '?a=1')).toEqual({ text: '' });
    expect(cutFormPair('z', 'a=1&b')).toBe('unchanged');
    expect(cutFormPair('a', 'a%ZZ=1')).toBe('drop');
  });

  it('reads the encoding from the content type, JSON without one, and drops a multipart body that names the field', () => {
    expect(cutBody('a', 'application/json; charset=utf-8', '{"a":1,"b":2}')).toEqual({ text: '{"b":2}' });
    expect(cutBody('a', 'application/vnd.x+json', '{"a":1}')).toEqual({ text: '{}' });
    expect(cutBody('a', null, '{"a":1,"b":2}')).toEqual({ text: '{"b":2}' });
    expect(cutBody('a', 'application/x-www-form-urlencoded', 'a=1&b=2')).toEqual({ text: 'b=2' });
    const multipart = '--x\r\nContent-Disposition: form-data; name="recording_url"\r\n\r\nhttps://r\r\n--x--\r\n';
    expect(cutBody('recording_url', 'multipart/form-data; boundary=x', multipart)).toBe('drop');
    expect(cutBody('summary', 'multipart/form-data; boundary=x', multipart)).toBe('unchanged');
    expect(cutBody('a', 'application/json', '  ')).toBe('unchanged');
  });
});

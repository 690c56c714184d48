import { describe, expect, it } from 'vitest';
import type { CallRecord } from '../../record.js';
import { compileMap, compileTemplate, mapSchema, templateParts, templateSchema } from './template.js';

const record: CallRecord = {
  id: '019a0000-0000-7000-8000-000000000001',
  hook: 'end-of-call',
  dedup_key: 'call_id:c-1',
  received_at: '2026-11-25T10:00:00.000Z',
  source: 'webhook',
  revision: 2,
  data: { first_name: 'Asha', call_duration: 184, phone_number: '+919812345678' },
  extra: { call_id: 'c-1', 'utm.source': 'ad', tags: ['a', 'b'], first_name: 'shadowed' },
  problems: [{ field: 'email_address', code: 'invalid_format', message: 'not an email', value: 'x@' }],
};

describe('map templates (docs/reference.md#queues-and-databases)', () => {
  it('keeps the JSON type of a lone placeholder, and leaves a missing one out', () => {
    expect(compileTemplate('{{ data.call_duration }}')(record)).toBe(184);
    expect(compileTemplate('{{revision}}')(record)).toBe(2);
    expect(compileTemplate('{{ problems }}')(record)).toEqual(record.problems);
    expect(compileTemplate('{{ extra.tags }}')(record)).toEqual(['a', 'b']);
    expect(compileTemplate('{{ conflicts_with }}')(record)).toBeUndefined();
    expect(compileMap({ duration: '{{ call_duration }}', other: '{{ data.nowhere }}' }).render(record)).toEqual({
      duration: 184,
    });
  });

  it('writes text where a template has other text, a missing value as empty text', () => {
    expect(compileTemplate('callhook.calls.{{ hook }}')(record)).toBe('callhook.calls.end-of-call');
    expect(compileTemplate('{{ first_name }} ({{ data.nowhere }}) {{ call_duration }}s')(record)).toBe('Asha () 184s');
    expect(compileTemplate('tags: {{ extra.tags }}')(record)).toBe('tags: ["a","b"]');
    expect(compileTemplate('plain text')(record)).toBe('plain text');
  });

  it('takes a template apart into the text around its placeholders and the paths they name', () => {
    expect(templateParts('callhook.{{hook}}.{{ data.call_outcome }}')).toEqual({
      texts: ['callhook.', '.', ''],
      paths: ['hook', 'data.call_outcome'],
    });
    expect(templateParts('plain')).toEqual({ texts: ['plain'], paths: [] });
  });

  it('looks a bare field up in data, then in extra; an extra field name is taken whole', () => {
    expect(compileTemplate('{{ first_name }}')(record)).toBe('Asha');
    expect(compileTemplate('{{ call_id }}')(record)).toBe('c-1');
    expect(compileTemplate('{{ extra.utm.source }}')(record)).toBe('ad');
    expect(compileTemplate('{{ extra.first_name }}')(record)).toBe('shadowed');
  });

  it("reads only a record's own fields: constructor or __proto__ is a missing field unless the call had one", () => {
    expect(compileTemplate('said {{ constructor }}')(record)).toBe('said ');
    expect(compileTemplate('{{ toString }}')(record)).toBeUndefined();
    expect(compileTemplate('{{ data.__proto__ }}')(record)).toBeUndefined();
    expect(compileMap({ note: '{{ extra.constructor }}', id: '{{ id }}' }).render(record)).toEqual({ id: record.id });
    const withKey = {
      ...record,
      extra: JSON.parse('{"constructor":"plain data","__proto__":"also"}') as Record<string, unknown>,
    };
    expect(compileTemplate('{{ constructor }}')(withKey)).toBe('plain data');
    expect(compileTemplate('{{ extra.__proto__ }}')(withKey)).toBe('also');
  });

  it('refuses an unknown root, naming the key it is under', () => {
    expect(() => compileTemplate('{{ record.id }}')).toThrow('{{ record.id }}: unknown root "record"');
    expect(() => compileTemplate('{{ hook.name }}')).toThrow('hook has no fields');
    const parsed = mapSchema.safeParse({ ok: '{{ id }}', contact: 'x {{ caller.name }}' });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0]).toMatchObject({
      path: ['contact'],
      message: expect.stringContaining('unknown root "caller"'),
    });
    expect(templateSchema.safeParse('calls.{{ nope.x }}').success).toBe(false);
    expect(mapSchema.parse({ id: '{{ id }}', when: '{{ received_at }}' }).targets).toEqual(['id', 'when']);
  });
});

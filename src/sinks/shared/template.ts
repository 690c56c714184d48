import { z } from 'zod';
import type { CallRecord } from '../../record.js';

/**
 * `map` templates (docs/reference.md#queues-and-databases): text in which `{{ path }}` is replaced by the record's
 * value at `path`. Compiled once at start-up, so a template naming an unknown root stops start-up naming the sink and
 * the key; rendered per delivery with no parsing left to do.
 */

/** The record's own fields a template may name; `data.<field>` and `extra.<field>` name one field of those. */
const ROOTS = [
  'id',
  'hook',
  'dedup_key',
  'received_at',
  'source',
  'revision',
  'platform',
  'conflicts_with',
  'problems',
  'data',
  'extra',
] as const;
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const FIELD = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** A compiled template: the value for a record, `undefined` when a lone placeholder finds nothing (leave it out). */
export type Template = (record: CallRecord) => unknown;

type Lookup = (record: CallRecord) => unknown;

/** Reads one path of a record; throws a message naming the path when it can never name anything. */
function lookup(path: string): Lookup {
  const dot = path.indexOf('.');
  const root = dot === -1 ? path : path.slice(0, dot);
  const rest = dot === -1 ? undefined : path.slice(dot + 1);
  if (root === 'data' || root === 'extra') {
    // A field name is taken whole: an undeclared field of `extra` may hold a dot of its own.
    if (rest === undefined || rest === '') return (record) => record[root];
    return (record) => own(record[root], rest);
  }
  if ((ROOTS as readonly string[]).includes(root)) {
    if (rest !== undefined) throw new Error(`{{ ${path} }}: ${root} has no fields`);
    return (record) => (record as unknown as Record<string, unknown>)[root];
  }
  if (rest !== undefined || !FIELD.test(path))
    throw new Error(`{{ ${path} }}: unknown root "${root}" (known: ${ROOTS.join(', ')}, or a bare field name)`);
  // A bare name is a field: declared (data) first, then as received (extra).
  return (record) => own(record.data, path) ?? own(record.extra, path);
}

/**
 * A record's own field only: `{{ constructor }}` or `{{ data.__proto__ }}` names a field a call did not have, not
 * what every object inherits (docs/reference.md#the-record: such keys are plain data).
 */
function own(fields: unknown, name: string): unknown {
  return fields !== null && typeof fields === 'object' && Object.hasOwn(fields, name)
    ? (fields as Record<string, unknown>)[name]
    : undefined;
}

export function compileTemplate(text: string): Template {
  const parts = text.split(PLACEHOLDER);
  // split() with one capture group alternates text and paths: [text, path, text, path, …, text].
  const lookups = parts.filter((_, i) => i % 2 === 1).map(lookup);
  if (lookups.length === 1 && parts[0] === '' && parts[2] === '') {
    // docs/reference.md#queues-and-databases: a lone placeholder keeps the value's JSON type (a number stays a number).
    return lookups[0]!;
  }
  if (lookups.length === 0) return () => text;
  return (record) => parts.map((part, i) => (i % 2 === 0 ? part : asText(lookups[(i - 1) / 2]!(record)))).join('');
}

/**
 * A template taken apart without compiling it: the paths its placeholders name (trimmed) and the text around them
 * (`texts.length === paths.length + 1`), for a sink whose target must be known before any record (a NATS subject's
 * stream filter, a routing key that must render one queue name).
 */
export function templateParts(text: string): { texts: string[]; paths: string[] } {
  const parts = text.split(PLACEHOLDER);
  return { texts: parts.filter((_, i) => i % 2 === 0), paths: parts.filter((_, i) => i % 2 === 1) };
}

/**
 * A template whose target is always text (a NATS subject, an AMQP routing key): a lone placeholder's value as text too,
 * and a missing value empty text, as everywhere in a template with other text (docs/reference.md#queues-and-databases).
 */
export type TextTemplate = (record: CallRecord) => string;

export function compileTextTemplate(text: string): TextTemplate {
  const template = compileTemplate(text);
  return (record) => asText(template(record));
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A map, target field → template, compiled. */
export interface CompiledMap {
  /** The target fields, in the order the config gives them. */
  targets: readonly string[];
  /** Each target's template as the config wrote it, for a sink that must know what a field holds before any record. */
  sources: Readonly<Record<string, string>>;
  /** The fields for a record; a field whose lone placeholder found nothing is left out (it takes its default). */
  render(record: CallRecord): Record<string, unknown>;
}

export function compileMap(map: Readonly<Record<string, string>>): CompiledMap {
  const entries = Object.entries(map).map(([target, text]) => [target, compileTemplate(text)] as const);
  return {
    targets: entries.map(([target]) => target),
    sources: { ...map },
    render(record) {
      const out: Record<string, unknown> = {};
      for (const [target, template] of entries) {
        const value = template(record);
        if (value !== undefined) out[target] = value;
      }
      return out;
    },
  };
}

/**
 * What the template makes of a record id when it names nothing but the id (`{{ id }}`, `call-{{ id }}`): the field's
 * value for any record of that id, so that rows can be found by id alone (a person's erasure, docs/reference.md#erasure).
 * Undefined for a template that names anything else, or nothing.
 */
export function idOnly(text: string): ((id: string) => string) | undefined {
  const { texts, paths } = templateParts(text);
  if (paths.length === 0 || !paths.every((path) => path === 'id')) return undefined;
  return (id) => texts.join(id);
}

/** One template as a sink option: checked when the config is, an unknown root naming the option. */
export const templateSchema = z.string().transform((text, ctx) => {
  try {
    return compileTemplate(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** A `map` (or `columns`) option: each template checked, an unknown root naming its key. */
export const mapSchema = z.record(z.string().min(1), z.string()).transform((map, ctx) => {
  let valid = true;
  for (const [target, text] of Object.entries(map)) {
    try {
      compileTemplate(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: [target], message: (err as Error).message });
      valid = false;
    }
  }
  return valid ? compileMap(map) : z.NEVER;
});

import { RE2JS } from 're2js';
import safeRegex from 'safe-regex2';
import { z } from 'zod';
import type { CallRecord, Scalar } from '../record.js';

/**
 * A sink's `when` (docs/reference.md#sinks-and-delivery): conditions on the normalised record, combined with all /
 * any / not. Checked once by filterSchema, with the rest of the sink's entry (sinks/registry.ts); compiled once by
 * compileFilter, with the hooks (routes.ts); then evaluated per record, as it is stored, without throwing. It is its
 * own module, importing neither the config's readers nor the intake, so both import it.
 */

type Ordered = number | string;
type Operators = {
  eq: Scalar;
  ne: Scalar;
  in: Scalar[];
  nin: Scalar[];
  exists: boolean;
  matches: string;
  gt: Ordered;
  gte: Ordered;
  lt: Ordered;
  lte: Ordered;
};
type Operator = keyof Operators;
/** One operator per condition, so `{ field, eq, ne }` is a type error as well as a parse error. */
type ExactlyOne<T> = { [K in keyof T]: { [P in K]: T[P] } & { [P in Exclude<keyof T, K>]?: never } }[keyof T];

export type Condition = { field: string } & ExactlyOne<Operators>;
export type Filter = { all: Filter[] } | { any: Filter[] } | { not: Filter } | Condition;

const OPERATORS = [
  'eq',
  'ne',
  'in',
  'nin',
  'exists',
  'matches',
  'gt',
  'gte',
  'lt',
  'lte',
] as const satisfies readonly Operator[];
const COMBINATORS = ['all', 'any', 'not'] as const;
const KNOWN_KEYS = new Set<string>(['field', ...OPERATORS, ...COMBINATORS]);

const scalar = (op: string) =>
  z.union([z.string(), z.number(), z.boolean()], { error: `${op} takes a string, number or boolean` });
const scalars = (op: string) =>
  z.array(scalar(op), { error: `${op} takes a list` }).min(1, `${op} takes a non-empty list`);
const ordered = (op: string) => z.union([z.number(), z.string()], { error: `${op} takes a number or a string` });
const filters = (op: string) =>
  z.array(
    z.lazy(() => filterSchema),
    { error: `${op} takes a list of filters` },
  );
/**
 * A `matches` value is matched on its first 4,096 characters (docs/reference.md#sinks-and-delivery). A pattern runs
 * on text the sender wrote, on the writer thread, at every commit, so it runs on RE2 (re2js, a port of Google's RE2:
 * an automaton, no backtracking): its time grows with the text's length, never faster, whatever the pattern, and this
 * bound holds that length.
 */
export const MATCHED_LENGTH = 4096;

const pattern = z.string({ error: 'matches takes a regular expression as a string' }).superRefine((source, ctx) => {
  try {
    new RegExp(source, 'i');
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(source)} is not a valid regular expression (${(error as Error).message})`,
    });
    return;
  }
  try {
    linear(source);
  } catch (error) {
    // RE2 runs no backreference and no lookaround: each needs backtracking (https://github.com/google/re2/wiki/Syntax).
    const why = (error as Error).message.replace(/^error parsing regexp: /, '');
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(source)} cannot be run in linear time (backreferences and lookarounds are not supported: ${why})`,
    });
    return;
  }
  // A pattern that can backtrack catastrophically is refused at start-up (docs/reference.md#sinks-and-delivery).
  // safe-regex2 (fastify's check of its route patterns) refuses a star height over 1, such as (a+)+, and more than
  // 25 repetitions in all. It misses others, such as (a|a)*$ or a*a*a*a*a*a*$, which RE2 runs in linear time; it
  // stays for the documented refusal and its clearer message.
  if (!safeRegex(source)) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(source)} can backtrack catastrophically on some texts (a repeated group holding a repetition, such as (a+)+, or more than 25 repetitions); write it without nesting`,
    });
  }
});

/** Case-insensitive, as every string comparison of a filter is (docs/reference.md#sinks-and-delivery). */
const linear = (source: string) => RE2JS.compile(source, RE2JS.CASE_INSENSITIVE);

const join = (names: readonly string[]) =>
  names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;

/**
 * One loose object with every key optional, then a structural check, instead of a z.union of the branches:
 * a union that fails answers only "Invalid input", and a config author needs to hear which key is wrong.
 */
const nodeSchema = z
  .looseObject(
    {
      all: filters('all').optional(),
      any: filters('any').optional(),
      not: z.lazy(() => filterSchema).optional(),
      field: z.string({ error: 'field takes a string' }).trim().min(1, 'field must not be empty').optional(),
      eq: scalar('eq').optional(),
      ne: scalar('ne').optional(),
      in: scalars('in').optional(),
      nin: scalars('nin').optional(),
      exists: z.boolean({ error: 'exists takes true or false' }).optional(),
      matches: pattern.optional(),
      gt: ordered('gt').optional(),
      gte: ordered('gte').optional(),
      lt: ordered('lt').optional(),
      lte: ordered('lte').optional(),
    },
    { error: 'a filter must be an object: { field, <operator>: value } or { all | any | not }' },
  )
  .superRefine((node, ctx) => {
    const keys = Object.keys(node).filter((key) => (node as Record<string, unknown>)[key] !== undefined);
    const unknown = keys.filter((key) => !KNOWN_KEYS.has(key));
    if (unknown.length > 0) {
      const message = Object.hasOwn(node, 'field')
        ? `unknown operator ${JSON.stringify(unknown[0])}; the operators are ${OPERATORS.join(', ')}`
        : `unknown key ${JSON.stringify(unknown[0])}; a filter is { field, <operator>: value } or one of all, any, not`;
      ctx.addIssue({ code: 'custom', message, path: [unknown[0]!] });
      return;
    }
    const combinators = keys.filter((key) => (COMBINATORS as readonly string[]).includes(key));
    const operators = keys.filter((key) => (OPERATORS as readonly string[]).includes(key));
    if (combinators.length > 0 && keys.length > 1) {
      ctx.addIssue({
        code: 'custom',
        message: `a filter takes exactly one of all, any, not, or a condition; got ${join(keys)}`,
      });
    } else if (combinators.length === 0 && node.field === undefined) {
      const got = operators.length > 0 ? `${join(operators)} without a field` : 'an empty object';
      ctx.addIssue({
        code: 'custom',
        message: `a filter is { field, <operator>: value } or one of all, any, not; got ${got}`,
      });
    } else if (combinators.length === 0 && operators.length !== 1) {
      const got = operators.length === 0 ? 'none' : join(operators);
      ctx.addIssue({
        code: 'custom',
        message: `a condition takes exactly one operator (${OPERATORS.join(', ')}), got ${got}`,
      });
    }
  });

/** The refinement above is what makes the loose object a Filter; zod cannot infer that from it. */
export const filterSchema: z.ZodType<Filter> = z.lazy(() => nodeSchema as unknown as z.ZodType<Filter>);

type Entry = { [K in Operator]: { op: K; value: Operators[K] } }[Operator];

function operatorOf(condition: Condition): Entry {
  for (const op of OPERATORS) {
    const value = (condition as Partial<Operators>)[op];
    if (value !== undefined) return { op, value } as Entry;
  }
  throw new TypeError(
    `filter: condition on ${JSON.stringify(condition.field)} has no operator; parse it with filterSchema first`,
  );
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
const text = (value: Scalar) => String(value).trim().toLowerCase();
const isScalar = (value: unknown): value is Scalar => ['string', 'number', 'boolean'].includes(typeof value);

function toNumber(value: Scalar): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  return typeof value === 'string' && NUMERIC.test(value.trim()) ? Number(value.trim()) : undefined;
}

function toBoolean(value: Scalar): boolean | undefined {
  if (typeof value === 'boolean') return value;
  const t = typeof value === 'string' ? text(value) : '';
  return t === 'true' ? true : t === 'false' ? false : undefined;
}

/** An empty text or list says nothing more than an absent one, so `exists` treats them alike. */
function isAbsent(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  return Array.isArray(value) && value.every(isAbsent);
}

function equals(a: Scalar, b: Scalar): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    const x = toBoolean(a);
    return x !== undefined && x === toBoolean(b);
  }
  if (typeof a === 'number' || typeof b === 'number') {
    const x = toNumber(a);
    return x !== undefined && x === toNumber(b);
  }
  return text(a) === text(b);
}

/** Numbers when both sides read as numbers, else text, so ISO dates and times order as they read. */
function order(a: Scalar, b: Scalar): number {
  const x = toNumber(a);
  const y = toNumber(b);
  if (x !== undefined && y !== undefined) return x - y;
  const s = text(a);
  const t = text(b);
  return s < t ? -1 : s > t ? 1 : 0;
}

/** A list field satisfies a positive test when any present element does; objects satisfy none. */
function some(value: unknown, test: (value: Scalar) => boolean): boolean {
  if (Array.isArray(value)) return value.some((element) => some(element, test));
  return isScalar(value) && !isAbsent(value) && test(value);
}

type Read = (record: CallRecord) => unknown;

/** Own properties only: a field named `constructor` or `__proto__` must never reach Object.prototype. */
function own(container: unknown, key: string): unknown {
  if (typeof container !== 'object' || container === null) return undefined;
  if (Array.isArray(container) && !/^\d+$/.test(key)) return undefined;
  return Object.hasOwn(container, key) ? (container as Record<string, unknown>)[key] : undefined;
}

/** A key that itself holds dots wins over walking the path, so both `a.b` shapes in extra stay reachable. */
function path(root: unknown, name: string): unknown {
  const whole = own(root, name);
  if (whole !== undefined || !name.includes('.')) return whole;
  return name.split('.').reduce<unknown>((container, key) => own(container, key), root);
}

const SPECIAL = new Map<string, Read>([
  ['valid', (record) => record.problems.length === 0],
  ['hook', (record) => record.hook],
  ['source', (record) => record.source],
  ['dedup_key', (record) => record.dedup_key],
  ['problems', (record) => record.problems.length],
  ['problem_fields', (record) => record.problems.map((problem) => problem.field)],
]);

function reader(field: string): Read {
  const special = SPECIAL.get(field);
  if (special) return special;
  if (field.startsWith('data.')) return (record) => path(record.data, field.slice(5));
  if (field.startsWith('extra.')) return (record) => path(record.extra, field.slice(6));
  // data values are scalars, never undefined, so undefined here means the key is absent from data.
  return (record) => own(record.data, field) ?? path(record.extra, field);
}

type Test = (value: unknown) => boolean;

const ORDERINGS = {
  gt: (d: number) => d > 0,
  gte: (d: number) => d >= 0,
  lt: (d: number) => d < 0,
  lte: (d: number) => d <= 0,
};

function test(entry: Entry): Test {
  switch (entry.op) {
    case 'eq':
    case 'ne': {
      const eq: Test = (value) => some(value, (x) => equals(x, entry.value));
      return entry.op === 'eq' ? eq : (value) => !eq(value);
    }
    case 'in':
    case 'nin': {
      const inList: Test = (value) => some(value, (x) => entry.value.some((target) => equals(x, target)));
      return entry.op === 'in' ? inList : (value) => !inList(value);
    }
    case 'exists':
      return (value) => !isAbsent(value) === entry.value;
    case 'matches': {
      // Linear in the text (see MATCHED_LENGTH): the writer thread never waits long on a hostile value.
      const regex = linear(entry.value);
      return (value) => some(value, (x) => regex.matcher(String(x).trim().slice(0, MATCHED_LENGTH)).find());
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const holds = ORDERINGS[entry.op];
      return (value) => some(value, (x) => holds(order(x, entry.value)));
    }
  }
}

/** Builds the predicate once; the regular expressions and field readers are made here, not per record. */
export function compileFilter(filter: Filter): (record: CallRecord) => boolean {
  if ('all' in filter && filter.all) {
    const parts = filter.all.map(compileFilter);
    return (record) => parts.every((part) => part(record));
  }
  if ('any' in filter && filter.any) {
    const parts = filter.any.map(compileFilter);
    return (record) => parts.some((part) => part(record));
  }
  if ('not' in filter && filter.not) {
    const inner = compileFilter(filter.not);
    return (record) => !inner(record);
  }
  const condition = filter as Condition;
  const read = reader(condition.field);
  const check = test(operatorOf(condition));
  return (record) => check(read(record));
}

/** A sink's `when` as its predicate: a sink without one takes every record. */
export function compileWhen(when: Filter | undefined): (record: CallRecord) => boolean {
  return when ? compileFilter(when) : () => true;
}

const fieldName = (field: string) => (/^[\w.-]+$/.test(field) ? field : JSON.stringify(field));

/** One line for `config check` and logs; field names that could break the line are quoted. */
export function describeFilter(filter: Filter): string {
  const nested = (part: Filter) => {
    const described = describeFilter(part);
    return ('all' in part && part.all && part.all.length > 1) || ('any' in part && part.any && part.any.length > 1)
      ? `(${described})`
      : described;
  };
  if ('all' in filter && filter.all) return filter.all.length === 0 ? 'always' : filter.all.map(nested).join(' and ');
  if ('any' in filter && filter.any) return filter.any.length === 0 ? 'never' : filter.any.map(nested).join(' or ');
  if ('not' in filter && filter.not) return `not (${describeFilter(filter.not)})`;
  const condition = filter as Condition;
  const entry = operatorOf(condition);
  const name = fieldName(condition.field);
  if (entry.op === 'exists') return entry.value ? `${name} exists` : `${name} is missing`;
  if (entry.op === 'matches') return `${name} matches /${entry.value}/i`;
  const value = Array.isArray(entry.value)
    ? `[${entry.value.map((v) => JSON.stringify(v)).join(', ')}]`
    : JSON.stringify(entry.value);
  return `${name} ${entry.op} ${value}`;
}

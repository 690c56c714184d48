/**
 * Declared body parameters → the `data`, `extra` and `problems` of a record (docs/reference.md#normalising).
 *
 * The fields come from an unauthenticated-shape body, so keys such as `__proto__` or `constructor`
 * are plain data: fields are read through own properties only and every output object is built with
 * Object.fromEntries, which defines properties instead of assigning them.
 */
import { type CountryCode, isSupportedCountry } from 'libphonenumber-js';
import { z } from 'zod';
import type { Problem, ProblemCode, Scalar } from '../record.js';
import { DATE_ORDERS, type DateOrder, readDate } from './calendar-date.js';
import { isMissing, toBoolean, toNumber, toText } from './coerce.js';
import { DEFAULT_PHONE_REGION, isEmail, isHttpUrl, toE164, toEnum } from './formats.js';
import { type FormatRule, formatOf, type Parameter, type ParameterType, parametersSchema } from './parameters.js';

export interface NormalizeOptions {
  /** Region for phone numbers written without a country code; docs/reference.md#normalising defaults to IN. */
  region?: CountryCode;
  /** Day or month first in `21/11/2026`-style dates; docs/reference.md#normalising reads the day first, as in India. */
  dateOrder?: DateOrder;
}

type Check = { ok: true; value: Scalar } | { ok: false; code: ProblemCode; message: string };

interface CompiledField {
  readonly identifier: string;
  readonly required: boolean;
  readonly check: (value: unknown) => Check;
}

/** Built once per hook at start-up; only `normalize` reads `fields`. */
export interface CompiledHook {
  readonly parameters: readonly Parameter[];
  readonly region: CountryCode;
  readonly dateOrder: DateOrder;
  readonly fields: readonly CompiledField[];
  readonly declared: ReadonlySet<string>;
}

export interface Normalized {
  data: Record<string, Scalar>;
  extra: Record<string, unknown>;
  problems: Problem[];
}

const MAX_SHOWN = 80;

/** How a received value is quoted in a problem message: enough to recognise it, never a whole essay. */
function show(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  const chars = Array.from(value);
  return JSON.stringify(chars.length > MAX_SHOWN ? `${chars.slice(0, MAX_SHOWN - 1).join('')}…` : value);
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return `a ${typeof value}`;
}

const ARTICLE: Record<ParameterType, string> = { string: 'a string', number: 'a number', boolean: 'a boolean' };
const TYPE_HINT: Record<ParameterType, string> = {
  string: '',
  // docs/reference.md#normalising: the amount forms are read too, so the hint shows one of each.
  number: ' (expected a number such as 1299.50, 1,299, 5,00,000, ₹499 or 2 lakh)',
  boolean: ' (expected true/false, yes/no or 1/0)',
};

const COERCE: Record<ParameterType, (v: unknown) => Scalar | undefined> = {
  string: toText,
  number: toNumber,
  boolean: toBoolean,
};

function typeCheck(identifier: string, type: ParameterType): (value: unknown) => Check {
  const coerce = COERCE[type];
  return (value) => {
    const coerced = coerce(value);
    if (coerced !== undefined) return { ok: true, value: coerced };
    const message =
      typeof value === 'object' || typeof value === 'function'
        ? `${identifier} is ${kindOf(value)}, expected ${ARTICLE[type]}`
        : `${identifier} ${show(value)} is not ${ARTICLE[type]}${TYPE_HINT[type]}`;
    return { ok: false, code: 'invalid_type', message };
  };
}

/** The numeric forms a date failure names, in the order the hook reads them. */
const DATE_FORMS: Record<DateOrder, string> = {
  DMY: 'DD/MM/YYYY, DD-MM-YYYY, DD.MM.YYYY',
  MDY: 'MM/DD/YYYY, MM-DD-YYYY, MM.DD.YYYY',
};

interface Formatter {
  apply: (text: string) => string | undefined;
  expected: string;
}

/** The normaliser of a format and what a failure message says was expected. */
function formatter(rule: FormatRule, { region, dateOrder }: Required<NormalizeOptions>): Formatter {
  switch (rule.format) {
    case 'e164':
      return {
        apply: (text) => toE164(text, region),
        expected: `is not a valid phone number (expected E.164, default region ${region})`,
      };
    case 'date':
      return {
        apply: (text) => readDate(text, dateOrder),
        expected: `is not a valid date (expected YYYY-MM-DD, ${DATE_FORMS[dateOrder]} or 21 Nov 2026)`,
      };
    case 'email':
      return { apply: (text) => (isEmail(text) ? text : undefined), expected: 'is not a valid e-mail address' };
    case 'url':
      return {
        apply: (text) => (isHttpUrl(text) ? text : undefined),
        expected: 'is not a valid URL (expected an absolute http or https URL)',
      };
    case 'enum': {
      const values = rule.values ?? [];
      return { apply: (text) => toEnum(text, values), expected: `is not one of ${values.join(', ')}` };
    }
  }
}

function compileField(p: Parameter, options: Required<NormalizeOptions>): CompiledField {
  const checkType = typeCheck(p.identifier, p.type);
  const rule = formatOf(p);
  if (rule === undefined) return { identifier: p.identifier, required: p.required, check: checkType };
  const { apply, expected } = formatter(rule, options);
  const check = (value: unknown): Check => {
    const typed = checkType(value);
    if (!typed.ok) return typed;
    // Formats are only declared on strings (parameterSchema), so the typed value is text.
    const formatted = apply(String(typed.value));
    if (formatted !== undefined) return { ok: true, value: formatted };
    return { ok: false, code: 'invalid_format', message: `${p.identifier} ${show(value)} ${expected}` };
  };
  return { identifier: p.identifier, required: p.required, check };
}

/**
 * Validates the declarations once, so a hook built in code gets the same checks as one from the
 * config file, and picks each field's coercion and format so `normalize` does no choosing per request.
 */
export function compileParameters(
  parameters: Parameter[],
  { region = DEFAULT_PHONE_REGION, dateOrder = 'DMY' }: NormalizeOptions = {},
): CompiledHook {
  if (!isSupportedCountry(region)) {
    throw new TypeError(
      `normalize: region "${String(region)}" is not a known country code (ISO 3166-1 alpha-2, e.g. IN)`,
    );
  }
  if (!DATE_ORDERS.includes(dateOrder)) {
    throw new TypeError(`normalize: dateOrder "${String(dateOrder)}" is not one of ${DATE_ORDERS.join(', ')}`);
  }
  const parsed = parametersSchema.safeParse(parameters);
  if (!parsed.success) {
    throw new TypeError(`normalize: invalid body parameters\n${z.prettifyError(parsed.error)}`);
  }
  const declared = Object.freeze(parsed.data.map((p) => Object.freeze({ ...p })));
  return Object.freeze({
    parameters: declared,
    region,
    dateOrder,
    fields: Object.freeze(declared.map((p) => Object.freeze(compileField(p, { region, dateOrder })))),
    declared: new Set(declared.map((p) => p.identifier)),
  });
}

export function normalize(fields: Record<string, unknown>, hook: CompiledHook): Normalized {
  const data: [string, Scalar][] = [];
  const problems: Problem[] = [];
  for (const field of hook.fields) {
    const value = Object.hasOwn(fields, field.identifier) ? fields[field.identifier] : undefined;
    if (isMissing(value)) {
      if (field.required) {
        problems.push({
          field: field.identifier,
          code: 'missing_required',
          message: `${field.identifier} is required but was missing or empty`,
        });
      }
      continue;
    }
    const checked = field.check(value);
    if (checked.ok) {
      data.push([field.identifier, checked.value]);
      continue;
    }
    // docs/reference.md#normalising: the value as received, untrimmed and whole (the message shortens it), so a sink
    // still gets what the caller said though it is left out of data.
    problems.push({ field: field.identifier, code: checked.code, message: checked.message, value });
  }
  const extra = Object.entries(fields).filter(([key]) => !hook.declared.has(key));
  return { data: Object.fromEntries(data), extra: Object.fromEntries(extra), problems };
}

/**
 * Body parameter declarations, as a hook's owner types them into the calling service's dashboard
 * (spec 6.2, "Body parameter row"), plus the optional `format` the receiver checks (docs/reference.md#normalising).
 */
import { z } from 'zod';

export const PARAMETER_TYPES = ['string', 'number', 'boolean'] as const;
export const PARAMETER_FORMATS = ['e164', 'date', 'email', 'url', 'enum'] as const;

export type ParameterType = (typeof PARAMETER_TYPES)[number];
export type ParameterFormat = (typeof PARAMETER_FORMATS)[number];

/** The identifier is the JSON key the sender uses; the spec asks for lowercase snake_case. */
const IDENTIFIER = /^[a-z][a-z0-9_]*$/;

export const parameterSchema = z
  .strictObject({
    identifier: z.string().regex(IDENTIFIER, {
      error: 'identifier must be lowercase snake_case (a letter, then letters, digits or underscores)',
    }),
    type: z.enum(PARAMETER_TYPES),
    required: z.boolean().default(false),
    description: z.string().default(''),
    format: z.enum(PARAMETER_FORMATS).optional(),
    // min(1) rather than nonempty(): nonempty() would make the output type a tuple.
    values: z
      .array(z.string().trim().min(1, { error: 'enum values must not be empty' }))
      .min(1, {
        error: 'values must list at least one value',
      })
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.format !== undefined && p.type !== 'string') {
      ctx.addIssue({
        code: 'custom',
        path: ['format'],
        message: `format is only allowed on string parameters (${p.identifier} is a ${p.type})`,
      });
    }
    if (p.format === 'enum' && p.values === undefined) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'values is required when format is "enum"' });
    }
    if (p.format !== 'enum' && p.values !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'values is only allowed when format is "enum"' });
    }
    // Enum matching ignores case (docs/reference.md#normalising), so two values equal but for case would be ambiguous.
    const seen = new Set<string>();
    for (const value of p.values ?? []) {
      const folded = value.toLowerCase();
      if (seen.has(folded)) {
        ctx.addIssue({
          code: 'custom',
          path: ['values'],
          message: `enum value "${value}" is listed twice (values are matched ignoring case)`,
        });
      }
      seen.add(folded);
    }
  });

export type Parameter = z.infer<typeof parameterSchema>;

export const parametersSchema = z.array(parameterSchema).superRefine((parameters, ctx) => {
  const seen = new Set<string>();
  parameters.forEach((p, index) => {
    if (seen.has(p.identifier)) {
      ctx.addIssue({
        code: 'custom',
        path: [index, 'identifier'],
        message: `duplicate parameter identifier "${p.identifier}"`,
      });
    }
    seen.add(p.identifier);
  });
});

export const SENTIMENTS = ['Positive', 'Neutral', 'Negative'] as const;

/** Spec 6.4, row for row, with the formats docs/reference.md#normalising asks the receiver to check. */
export const RECOMMENDED_PARAMETERS: Parameter[] = [
  { identifier: 'first_name', type: 'string', required: true, description: "Caller's first name" },
  { identifier: 'last_name', type: 'string', required: true, description: "Caller's last name" },
  {
    identifier: 'phone_number',
    type: 'string',
    required: true,
    description: "Caller's number in E.164 format",
    format: 'e164',
  },
  {
    identifier: 'email_address',
    type: 'string',
    required: false,
    description: "Caller's e-mail address",
    format: 'email',
  },
  { identifier: 'order_id', type: 'string', required: false, description: 'Order referenced' },
  { identifier: 'call_date', type: 'string', required: true, description: 'Date as YYYY-MM-DD', format: 'date' },
  { identifier: 'call_duration', type: 'number', required: true, description: 'Seconds' },
  { identifier: 'call_cost', type: 'number', required: false, description: 'Cost in the account currency' },
  { identifier: 'product_name', type: 'string', required: false, description: 'Product discussed' },
  { identifier: 'quantity', type: 'number', required: false, description: 'Quantity ordered' },
  { identifier: 'order_value', type: 'number', required: false, description: 'Total value' },
  { identifier: 'address', type: 'string', required: false, description: 'Delivery address' },
  { identifier: 'pincode', type: 'string', required: false, description: 'Postal code' },
  {
    identifier: 'sentiment_analysis',
    type: 'string',
    required: false,
    description: 'Positive, Neutral or Negative',
    format: 'enum',
    values: [...SENTIMENTS],
  },
  {
    identifier: 'call_outcome',
    type: 'string',
    required: true,
    description: 'Final outcome, for example order placed, not interested, callback requested',
  },
  { identifier: 'call_summary', type: 'string', required: true, description: 'Short summary' },
  {
    identifier: 'recording_url',
    type: 'string',
    required: false,
    description: 'URL of the recording',
    format: 'url',
  },
];

/** A format together with the values it needs (only `enum` has any). */
export interface FormatRule {
  format: ParameterFormat;
  values?: readonly string[];
}

/**
 * docs/reference.md#normalising checks these fields by name, so a hook that declares them by hand without a
 * format still gets the check; an explicit format always wins.
 */
const IMPLIED_FORMATS: ReadonlyMap<string, FormatRule> = new Map<string, FormatRule>([
  ['phone_number', { format: 'e164' }],
  ['call_date', { format: 'date' }],
  ['email_address', { format: 'email' }],
  ['recording_url', { format: 'url' }],
  ['sentiment_analysis', { format: 'enum', values: SENTIMENTS }],
]);

/** The format a string parameter without one gets from its identifier; undefined otherwise. */
export function impliedFormat(p: Pick<Parameter, 'identifier' | 'type' | 'format'>): FormatRule | undefined {
  if (p.type !== 'string' || p.format !== undefined) return undefined;
  return IMPLIED_FORMATS.get(p.identifier);
}

/** The format a parameter is checked against: its own, else the implied one, else none. */
export function formatOf(p: Parameter): FormatRule | undefined {
  if (p.format === undefined) return impliedFormat(p);
  return p.values === undefined ? { format: p.format } : { format: p.format, values: p.values };
}

import { z } from 'zod';
import { durationSchema } from '../duration.js';
import { retrySchema } from '../sinks/policy.js';
import { activeHoursSchema } from './active-hours.js';
import { CHANNEL_TYPES, channelType } from './channels/types.js';

/**
 * The `alerts` part of the config (docs/reference.md#alerts): its channels, each checked here with its type's own
 * options, so a bad one stops start-up and `config check` naming the key; and its rules, checked by their shape and
 * defaults, evaluated by alerts/event-rules.ts and alerts/timer-rules.ts (assembled in alerts/monitor.ts).
 */

const NAME = /^[a-z0-9][a-z0-9_-]*$/;

export type RetryOptions = z.output<typeof retrySchema>;

export interface ChannelConfig {
  name: string;
  type: string;
  /** As a sink's `retry` (docs/reference.md#sinks-and-delivery), for the messages that go through the outbox. */
  retry: RetryOptions | undefined;
  /** The options of its type, checked, with their defaults. */
  options: Readonly<Record<string, unknown>>;
}

const channelSchema = z
  .looseObject({
    name: z.string({ error: 'name is required' }).regex(NAME, 'a channel name is lowercase letters, digits, - and _'),
    type: z.string({ error: `type is required: one of ${Object.keys(CHANNEL_TYPES).join(', ')}` }),
    retry: retrySchema.optional(),
  })
  .transform((entry, ctx): ChannelConfig => {
    const { name, type, retry, ...rest } = entry;
    const channel = channelType(type);
    if (!channel) {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: `unknown channel type "${type}" (types: ${Object.keys(CHANNEL_TYPES).join(', ')})`,
      });
      return z.NEVER;
    }
    const options = nested(channel.options, rest, ctx) as Record<string, unknown> | undefined;
    return options === undefined ? z.NEVER : { name, type, retry, options };
  });

const positive = (option: string) => durationSchema.refine((ms) => ms > 0, `${option} must be longer than 0`);

/** The rules and their options (docs/reference.md#alerts); each is on with its defaults once a channel exists. */
const RULES = {
  dead_delivery: z.strictObject({ quiet: positive('quiet').default(15 * 60_000) }),
  sink_backlog: z.strictObject({ older_than: positive('older_than').default(15 * 60_000) }),
  store_outage: z.strictObject({}),
  auth_failures: z.strictObject({
    max: z.number().int().min(1).default(20),
    per: positive('per').default(5 * 60_000),
    after_success: durationSchema.default(24 * 3_600_000),
    quiet: positive('quiet').default(15 * 60_000),
  }),
  no_calls: z.strictObject({
    hooks: z.array(z.string().min(1)).min(1).optional(),
    quiet_for: positive('quiet_for').default(2 * 3_600_000),
    active_hours: activeHoursSchema.prefault('09:00-21:00'),
  }),
  problem_rate: z.strictObject({
    window: positive('window').default(3_600_000),
    min_calls: z.number().int().min(1).default(20),
    ratio: z.number().min(0).max(1).default(0.5),
  }),
  held_waiting: z.strictObject({ older_than: positive('older_than').default(24 * 3_600_000) }),
  lost_calls: z.strictObject({}),
} as const;

export type RuleName = keyof typeof RULES;
/** Every rule's name, as docs/reference.md#alerts lists them: the admin API's and the dashboard's `rule` filter, and
 * /metrics' series. */
export const RULE_NAMES = Object.keys(RULES) as readonly RuleName[];
export type RulesConfig = { [R in RuleName]: z.output<(typeof RULES)[R]> | false };

/**
 * Each rule by its name: `true` (or nothing after the name) is the rule with its defaults, `false` turns it off, an
 * object sets its options. A rule not named is on with its defaults, but `no_calls`, off unless set: a quiet night is
 * no outage for most.
 */
const rulesSchema = z.record(z.string(), z.unknown()).transform((given, ctx): RulesConfig => {
  const rules: Record<string, unknown> = {};
  for (const name of Object.keys(given))
    if (!Object.hasOwn(RULES, name))
      ctx.addIssue({ code: 'custom', path: [name], message: `unknown rule (rules: ${Object.keys(RULES).join(', ')})` });
  for (const name of Object.keys(RULES) as RuleName[]) {
    const value = Object.hasOwn(given, name) ? given[name] : name !== 'no_calls';
    if (value === false) rules[name] = false;
    else {
      const parsed = nested(RULES[name], value === true || value === null ? {} : value, ctx, [name]);
      rules[name] = parsed ?? false;
    }
  }
  return rules as RulesConfig;
});

export const alertsSchema = z
  .strictObject({
    channels: z.array(channelSchema).default([]),
    rules: rulesSchema.prefault({}),
    /** How often the rules are evaluated besides at their events: at least every 5 s, sooner when set. */
    every: durationSchema
      .refine(
        (ms) => ms >= 100 && ms <= 5000,
        'every must be between 100ms and 5s: the rules are evaluated at least every 5 s',
      )
      .default(5000),
  })
  .superRefine(({ channels }, ctx) => {
    const names = channels.map((c) => c.name);
    const twice = names.findIndex((n, i) => names.indexOf(n) !== i);
    if (twice !== -1)
      ctx.addIssue({
        code: 'custom',
        path: ['channels', twice, 'name'],
        message: `"${names[twice]}" names two channels`,
      });
  });

export type AlertsConfig = z.output<typeof alertsSchema>;

export const DEFAULT_ALERTS: AlertsConfig = alertsSchema.parse({});

/** The dashboard's address as seen from outside, for links in messages: an http(s) URL without query or fragment. */
export const publicUrlSchema = z
  .url({ protocol: /^https?$/, error: 'public_url must be the http:// or https:// address of the dashboard' })
  .refine((url) => !URL.canParse(url) || (new URL(url).search === '' && new URL(url).hash === ''), {
    error: 'public_url must have no query or fragment',
  })
  .transform((url) => url.replace(/\/+$/, ''));

/** A channel as it was written in the config: its name, type and retry, and its options beside them. */
export function channelEntry({ name, type, retry, options }: ChannelConfig): Record<string, unknown> {
  return { name, type, ...(retry === undefined ? {} : { retry }), ...options };
}

/**
 * `value` checked by `schema`, its issues told to `ctx` under the current path (zod prefixes them), unknown keys
 * named one by one and a missing option said as such.
 */
function nested<S extends z.ZodType>(
  schema: S,
  value: unknown,
  ctx: z.RefinementCtx,
  at: PropertyKey[] = [],
): z.output<S> | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    const path = [...at, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: [...path, key], message: 'unknown option' });
    } else {
      const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
      ctx.addIssue({ code: 'custom', path, message: missing ? 'is required' : issue.message });
    }
  }
  return undefined;
}

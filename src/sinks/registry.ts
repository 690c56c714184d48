import { ConfigError, type SinkConfig } from '../config.js';
import { jsonlSink } from './jsonl.js';
import { logSink } from './log.js';
import type { Sink, SinkContext, SinkType } from './sink.js';

/** Built-in sink types by the `type` a config names; more arrive issue by issue (contract section 5). */
export const SINK_TYPES: Readonly<Record<string, SinkType>> = {
  log: logSink,
  jsonl: jsonlSink,
};

/** Checks every sink's options before any is opened, so a bad config stops start-up without side effects. */
export function checkSinkConfigs(configs: readonly SinkConfig[]): void {
  configs.forEach((config, index) => parseOptions(config, index));
}

export async function createSinks(configs: readonly SinkConfig[], context: Omit<SinkContext, 'name'>): Promise<Map<string, Sink>> {
  const sinks = new Map<string, Sink>();
  for (const [index, config] of configs.entries()) {
    const { type, options } = parseOptions(config, index);
    sinks.set(config.name, await type.create(options, { ...context, name: config.name }));
  }
  return sinks;
}

function parseOptions(config: SinkConfig, index: number): { type: SinkType; options: unknown } {
  const type = Object.hasOwn(SINK_TYPES, config.type) ? SINK_TYPES[config.type] : undefined;
  if (!type) {
    throw new ConfigError(`sinks[${index}].type: unknown sink type "${config.type}" (known types: ${Object.keys(SINK_TYPES).join(', ')})`);
  }
  const { name: _name, type: _type, ...rest } = config;
  const parsed = type.options.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.code === 'unrecognized_keys' ? `${issue.keys[0]}: unknown option` : `${issue.path.join('.')}: ${issue.message}`;
    throw new ConfigError(`sinks[${index}] (${config.name}).${key}`);
  }
  return { type, options: parsed.data };
}

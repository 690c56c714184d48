import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AlertMessage } from '../message.js';

/**
 * An alert channel is shaped like a sink (sinks/sink.ts): `{ type, options, secretOptions, open }`, where
 * `open(options, context)` gives `{ send, close? }`. What `send` throws is a sink's error (sinks/errors.ts), so a
 * message that failed is retried or given up on as a delivery is (docs/reference.md#alerts).
 */

export interface SendContext {
  /** Aborted when the attempt times out or the process shuts down. */
  signal: AbortSignal;
}

export interface Channel {
  send(message: AlertMessage, context: SendContext): Promise<void>;
  close?(): Promise<void>;
}

export interface ChannelContext {
  /** The channel's `name` in the config. */
  name: string;
  log: Logger;
  /** The config's `public_url`: the dashboard's address, for a link in each message. */
  publicUrl: string | undefined;
}

export interface ChannelType<Schema extends z.ZodType = z.ZodType> {
  type: string;
  /** Options after `name`, `type` and `retry`, checked when the config is loaded; a bad one stops start-up. */
  options: Schema;
  /** The options that hold a secret (dotted paths), masked wherever callhook writes text (docs/reference.md#secrets). */
  secretOptions: readonly string[];
  open(options: z.output<Schema>, context: ChannelContext): Channel;
}

/** Declares a channel type with its options' types inferred from the schema. */
export function defineChannelType<Schema extends z.ZodType>(type: ChannelType<Schema>): ChannelType<Schema> {
  return type;
}

import type { ChannelType } from './channel.js';
import { emailChannel } from './email.js';
import { httpChannel } from './http.js';
import { logChannel } from './log.js';
import { pagerdutyChannel } from './pagerduty.js';
import { slackChannel } from './slack.js';

/**
 * The channel types (docs/reference.md#alerts), one file each. Their options are checked when the config is loaded,
 * so the table is static; what a type needs only to send (nodemailer) it loads when it first sends.
 */
export const CHANNEL_TYPES: Readonly<Record<string, ChannelType>> = {
  log: logChannel,
  slack: slackChannel,
  http: httpChannel,
  email: emailChannel,
  pagerduty: pagerdutyChannel,
};

/** A channel type by its config name; undefined for a name that is none (`toString` included). */
export function channelType(type: string): ChannelType | undefined {
  return Object.hasOwn(CHANNEL_TYPES, type) ? CHANNEL_TYPES[type] : undefined;
}

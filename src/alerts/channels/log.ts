import { z } from 'zod';
import { dashboardLink, headline } from '../message.js';
import { defineChannelType } from './channel.js';

/**
 * A pino line per message (docs/reference.md#alerts): at `warn` when an incident opens, so it stands out of the info
 * lines around it, and at `info` when it resolves or for a test.
 */
export const logChannel = defineChannelType({
  type: 'log',
  options: z.strictObject({}),
  secretOptions: [],
  open(_options, { name, log, publicUrl }) {
    const channelLog = log.child({ channel: name });
    const link = dashboardLink(publicUrl);
    return {
      async send(message) {
        const level = message.kind === 'opened' ? 'warn' : 'info';
        channelLog[level](
          { alert: message.kind, incident: message.incident, ...(link === undefined ? {} : { dashboard: link }) },
          `${headline(message)}: ${message.incident.summary}`,
        );
      },
    };
  },
});

import type { SMTPTransportOptions, Transporter } from 'nodemailer';
import { z } from 'zod';
import { PermanentError, RetryableError } from '../../sinks/errors.js';
import { headline, plainText } from '../message.js';
import { defineChannelType } from './channel.js';

/** An SMTP server that has not answered in these times will not; the message is tried again later. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;
/** An address alone, or `Name <address>`: what a mail header holds (RFC 5322 section 3.4), read loosely. */
const ADDRESS = /^(?:[^<>]*<\s*[^\s@<>]+@[^\s@<>]+\s*>|\s*[^\s@<>]+@[^\s@<>]+\s*)$/;
/** nodemailer's error codes for a refusal that will not change by trying again: wrong credentials, a bad address. */
const REFUSED = new Set(['EAUTH', 'ENOAUTH', 'EENVELOPE', 'ECONFIG']);

const address = (option: string) =>
  z.string({ error: `${option} must be an e-mail address` }).regex(ADDRESS, `${option} must be an e-mail address`);

const smtpUrl = z
  .string({ error: 'smtp_url is required: smtp://user:password@host:587 or smtps://user:password@host:465' })
  .refine(
    (text) =>
      URL.canParse(text) && ['smtp:', 'smtps:'].includes(new URL(text).protocol) && new URL(text).hostname !== '',
    // Never echo the value: it holds the password.
    { error: 'smtp_url must be smtp://user:password@host:587 or smtps://user:password@host:465' },
  );

/**
 * One plain-text e-mail per message, over SMTP with nodemailer (docs/reference.md#alerts). `smtp_url` says how:
 * `smtps://` is TLS from the first byte (port 465 by default), `smtp://` upgrades with STARTTLS when the server offers
 * it (port 587 by default), and the user info, when present, is the AUTH login. nodemailer is loaded by the first
 * message, so a deployment without an e-mail channel never loads it.
 */
export const emailChannel = defineChannelType({
  type: 'email',
  secretOptions: ['smtp_url'],
  options: z.strictObject({
    smtp_url: smtpUrl,
    from: address('from'),
    to: z.array(address('each of to'), { error: 'to must be a list of e-mail addresses' }).min(1, {
      error: 'to must list at least one address',
    }),
  }),
  open({ smtp_url, from, to }, { publicUrl }) {
    let transport: Promise<Transporter> | undefined;
    return {
      async send(message, { signal }) {
        transport ??= import('nodemailer').then(({ createTransport }) => createTransport(transportOptions(smtp_url)));
        const mailer = await transport;
        signal.throwIfAborted();
        const sent = mailer.sendMail({
          from,
          to,
          subject: `[callhook] ${headline(message)}`,
          text: plainText(message, publicUrl),
        });
        const aborted = new Promise<never>((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
        try {
          await Promise.race([sent, aborted]);
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          throw smtpError(err);
        }
      },
      async close() {
        if (transport) (await transport).close();
      },
    };
  },
});

/** nodemailer's transport from the URL: TLS by its scheme, AUTH by its user info, each decoded as a URL's parts are. */
export function transportOptions(text: string): SMTPTransportOptions {
  const url = new URL(text);
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(url.username === '' && url.password === ''
      ? {}
      : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  };
}

/**
 * What a failed send means for trying again (RFC 5321 section 4.2.1): a 5yz reply and wrong credentials will fail
 * the same way, a 4yz reply, a lost connection and a time-out may not.
 */
export function smtpError(err: unknown): RetryableError | PermanentError {
  const { code, responseCode, message } = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    responseCode?: unknown;
    message?: unknown;
  };
  const text = `SMTP: ${typeof message === 'string' ? message : String(err)}`;
  if (typeof responseCode === 'number' && responseCode >= 400 && responseCode < 600) {
    return responseCode >= 500 ? new PermanentError(text, { cause: err }) : new RetryableError(text, { cause: err });
  }
  return typeof code === 'string' && REFUSED.has(code)
    ? new PermanentError(text, { cause: err })
    : new RetryableError(text, { cause: err });
}

import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server (the `smtp-server` package) in the test process, on 127.0.0.1, that asks for AUTH (PLAIN or LOGIN)
 * with one user and password and keeps every message it accepts: its envelope and its raw text, with the headers and
 * the body read back. STARTTLS is off: its certificate would be self-signed, which a client rightly refuses.
 */

export interface ReceivedMail {
  /** Who logged in. */
  user: string;
  mailFrom: string;
  rcptTo: string[];
  headers: Map<string, string>;
  /** The text body, its transfer encoding undone. */
  body: string;
  raw: string;
}

export interface FakeSmtp {
  host: string;
  port: number;
  user: string;
  password: string;
  mails: ReceivedMail[];
  /** Failed logins, with the user given. */
  refusedLogins: string[];
  close(): Promise<void>;
}

export async function startFakeSmtp({
  user = 'alerts@example.in',
  password = 'smtp-pa55:word@1',
} = {}): Promise<FakeSmtp> {
  const mails: ReceivedMail[] = [];
  const refusedLogins: string[] = [];
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === password) return callback(null, { user: auth.username });
      refusedLogins.push(auth.username ?? '');
      return callback(new Error('Invalid username or password'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        mails.push({
          user: String(session.user),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          ...readMessage(raw),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    mails,
    refusedLogins,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Headers (folded lines joined, names lower-cased) and the body, quoted-printable or base64 undone (RFC 2045). */
function readMessage(raw: string): { headers: Map<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map(
    head.split('\r\n').map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as [string, string];
    }),
  );
  const encoded = raw.slice(split + 4);
  const encoding = headers.get('content-transfer-encoding')?.toLowerCase();
  const body =
    encoding === 'quoted-printable'
      ? Buffer.from(
          encoded
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
          'latin1',
        ).toString('utf8')
      : encoding === 'base64'
        ? Buffer.from(encoded, 'base64').toString('utf8')
        : encoded;
  return { headers, body: body.replace(/\r\n/g, '\n').replace(/\n$/, '') };
}

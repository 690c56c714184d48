import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The `credentials` option: a service account's JSON key (https://cloud.google.com/iam/docs/keys-create-delete),
 * given as the path of the file Google Cloud console downloads or as that file's text (a `${VAR}` holding it).
 * Read once at start-up, so a missing file, a key of another kind or a private key that does not parse stops
 * start-up naming the option. No message echoes the value: it may be the key itself.
 */

export interface ServiceAccount {
  /** The account's address: the JWT's `iss`, and whom the spreadsheet must be shared with. */
  clientEmail: string;
  privateKey: KeyObject;
  /** The PEM as the key file holds it, for masking (SinkContext.secret). */
  privateKeyPem: string;
}

export function readServiceAccount(value: string): ServiceAccount {
  const json = parseKey(value.trim().startsWith('{') ? value : readKeyFile(value));
  if (json.type !== 'service_account') {
    const kind =
      typeof json.type === 'string' && /^[a-z_]{1,40}$/.test(json.type) ? ` (its type is "${json.type}")` : '';
    throw new Error(
      `not a service account's key${kind}: create a JSON key under IAM → Service accounts → Keys in Google Cloud console`,
    );
  }
  const clientEmail = json.client_email;
  if (typeof clientEmail !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(clientEmail))
    throw new Error('the key has no client_email');
  const pem = json.private_key;
  if (typeof pem !== 'string' || pem === '') throw new Error('the key has no private_key');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new Error("the key's private_key is not a PEM private key");
  }
  // Google signs service-account grants with RS256 only
  // (https://developers.google.com/identity/protocols/oauth2/service-account#jwt-auth).
  if (privateKey.asymmetricKeyType !== 'rsa')
    throw new Error("the key's private_key is not an RSA key, which RS256 needs");
  return { clientEmail, privateKey, privateKeyPem: pem };
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new Error(
      `cannot read the key file${typeof code === 'string' ? ` (${code})` : ''}; give the path of the service account's JSON key, or its JSON text`,
    );
  }
}

function parseKey(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error("the key is not JSON: give the service account's JSON key as Google Cloud console downloads it");
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('the key is not a JSON object');
  return parsed as Record<string, unknown>;
}

/**
 * What to mask of a private key (docs/reference.md#secrets): the PEM, and each line of its base64 body on its own, so a
 * part of it (an excerpt cut short, the JSON-escaped `\n` between lines) is masked too. A short last line is left:
 * a few bytes of a key give nothing away, and would match by chance.
 */
export function keySecrets(pem: string): string[] {
  const lines = pem
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= 16 && !line.startsWith('-----'));
  return [pem.trim(), ...lines];
}

/** The option, checked when the config is: the message names what is wrong with the key, never the key. */
const CREDENTIALS = "credentials must be the path of a service account's JSON key, or its JSON text";

export const credentialsSchema = z
  .string({ error: CREDENTIALS })
  .min(1, { error: CREDENTIALS })
  .transform((value, ctx) => {
    try {
      return readServiceAccount(value);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

import type { HookConfig, SinkConfig } from './config.js';

/**
 * Secrets never reach a log line, an admin reply or the config check (contract section 6): every configured one
 * is collected once, and text that could carry one is masked before it leaves the process.
 */

const SECRET_OPTION = /secret|token|password|passwd|api_?key|authorization|credential|webhook_url/i;

export function collectSecrets(apiKeys: string[], adminToken: string | undefined, databaseUrl: string | undefined, hooks: HookConfig[], sinks: SinkConfig[]): string[] {
  const secrets = new Set<string>([...apiKeys, ...hooks.flatMap((h) => h.keys)]);
  if (adminToken) secrets.add(adminToken);
  const dbPassword = databaseUrl ? safeUrl(databaseUrl)?.password : undefined;
  // The URL carries the password percent-encoded, a driver's error message may carry it decoded.
  if (dbPassword) for (const form of [dbPassword, decodeURIComponent(dbPassword)]) secrets.add(form);
  const visit = (value: unknown, secret: boolean): void => {
    if (typeof value === 'string' && secret && value.length >= 4) secrets.add(value);
    else if (Array.isArray(value)) value.forEach((v) => visit(v, secret));
    else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, secret || SECRET_OPTION.test(k));
    }
  };
  visit(sinks, false);
  return [...secrets];
}

/** Replaces every configured secret inside `text` (URLs, headers, whole values) with `***`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  return secretMasker(secrets)(text);
}

/**
 * `maskSecrets` for text that comes again and again (every log line): the secrets are ordered once, longest
 * first so a secret containing another is masked whole, and text that holds none comes back as it is.
 */
export function secretMasker(secrets: readonly string[]): (text: string) => string {
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of ordered) if (out.includes(s)) out = out.split(s).join('***');
    return out;
  };
}

function safeUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}


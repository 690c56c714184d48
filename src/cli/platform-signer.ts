import type { HookConfig } from '../config.js';
import { PLATFORMS, platformOf } from '../platforms/index.js';
import type { PlatformType } from '../platforms/platform.js';

/**
 * How `callhook replay` and `callhook simulate --platform` sign what they send as a voice platform would
 * (docs/reference.md#other-voice-platforms): with the secret and options of the platform hook the config has, or with
 * the `--secret` (and `--option`s) given for a receiver whose config this machine does not have.
 */

export interface Signer {
  // biome-ignore lint/suspicious/noExplicitAny: each platform has options of its own type, checked by its own schema.
  platform: PlatformType<any>;
  secret: string;
  /** The hook's platform options, as the platform's schema gave them. */
  options: unknown;
}

export interface SignerChoice {
  /** The config's hooks, when there is a config. */
  hooks?: ReadonlyMap<string, Pick<HookConfig, 'name' | 'platform'>>;
  /** `--secret`: wins over the hook's. */
  secret?: string;
  /** `--option key=value` pairs: replace the hook's options. */
  options?: readonly (readonly [string, string])[];
}

/** The platform a name is, or an error listing the ones this version has. */
// biome-ignore lint/suspicious/noExplicitAny: as above.
export function platformNamed(name: string, option: string): PlatformType<any> {
  const platform = platformOf(name);
  if (!platform) throw new Error(`${option} must be one of ${Object.keys(PLATFORMS).join(', ')}, not ${name}`);
  return platform;
}

/**
 * The signer of what is sent to `hook` as `platform`; throws when the config's hook of that name is not one of that
 * platform, or when there is no secret to sign with.
 */
export function signerFor(
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  platform: PlatformType<any>,
  hook: string,
  { hooks, secret, options = [] }: SignerChoice,
): Signer {
  const configured = hooks?.get(hook);
  if (configured && configured.platform?.name !== platform.name) {
    const what = configured.platform ? `a ${configured.platform.name} hook` : "the calling service's hook";
    throw new Error(`hook ${hook} is ${what} in the config, not a ${platform.name} one`);
  }
  const key = secret ?? configured?.platform?.secret;
  if (!key) {
    throw new Error(
      `no ${platform.name} secret to sign with: pass --secret, or the config (--config) that has the ${platform.name} hook ${hook}`,
    );
  }
  const given = options.length > 0 || !configured?.platform;
  return { platform, secret: key, options: given ? platformOptions(platform, options) : configured.platform!.options };
}

/** The hooks of the config that a platform sends to, in the config's order. */
export function platformHooks(
  hooks: ReadonlyMap<string, Pick<HookConfig, 'name' | 'platform'>>,
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  platform: PlatformType<any>,
): string[] {
  return [...hooks.values()].filter((h) => h.platform?.name === platform.name).map((h) => h.name);
}

/** `--option key=value` pairs read by the platform's own schema, as the config's keys of a hook would be. */
// biome-ignore lint/suspicious/noExplicitAny: as above.
function platformOptions(platform: PlatformType<any>, pairs: readonly (readonly [string, string])[]): unknown {
  const parsed = platform.options.safeParse(Object.fromEntries(pairs));
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  if (issue?.code === 'unrecognized_keys')
    throw new Error(`--option ${issue.keys[0]}: a ${platform.name} hook has no such option`);
  throw new Error(`--option ${String(issue?.path[0] ?? '')}: ${issue?.message}`);
}

/** `--option key=value`, repeatable. */
export function collectOption(text: string, previous: [string, string][]): [string, string][] {
  const at = text.indexOf('=');
  if (at < 1) throw new Error(`--option takes key=value, not "${text}"`);
  return [...previous, [text.slice(0, at), text.slice(at + 1)]];
}

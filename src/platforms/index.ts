import { bland } from './bland.js';
import { elevenlabs } from './elevenlabs.js';
import type { PlatformName, PlatformType } from './platform.js';
import { retell } from './retell.js';
import { vapi } from './vapi.js';

/** The platforms a hook may name (docs/reference.md#other-voice-platforms), one file each. */
// biome-ignore lint/suspicious/noExplicitAny: each platform has options of its own type, checked by its own schema.
export const PLATFORMS: Record<PlatformName, PlatformType<any>> = {
  vapi,
  retell,
  elevenlabs,
  bland,
};

// biome-ignore lint/suspicious/noExplicitAny: as above.
export function platformOf(name: string): PlatformType<any> | undefined {
  return Object.hasOwn(PLATFORMS, name) ? PLATFORMS[name as PlatformName] : undefined;
}

import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { platformOf } from '../platforms/index.js';
import { type LoadedFixture, loadFixtures } from './fixtures.js';
import { type Signer, type SignerChoice, signerFor } from './platform-signer.js';

/**
 * Which fixtures `callhook replay <paths>` sends, and which it signs as a voice platform (docs/reference.md#fixtures,
 * docs/reference.md#other-voice-platforms). A platform's fixtures live in `fixtures/<platform>/`, each naming the hook
 * it is sent to. Replaying a directory sends its own files, and each of its platform sub-folders whose fixtures' hooks
 * the config has, as hooks of that platform: the default set replays as it always did against a receiver without them,
 * and the others are skipped, said. A platform folder or file named on the command line is sent whatever the config
 * says (signed with `--secret` when the config does not have its hook).
 *
 * A fixture is a platform's when it is in a platform's folder or sent to a platform hook of the config: it is signed
 * afresh at each send (a signature carries its time) with that hook's secret, or `--secret`.
 */

export interface ReplayFixture extends LoadedFixture {
  signer?: Signer;
}

export interface FixturesToReplay {
  fixtures: ReplayFixture[];
  /** A line for each platform folder left out, and why. */
  skipped: string[];
}

export function fixturesToReplay(
  paths: readonly string[],
  { hook, ...choice }: SignerChoice & { hook?: string },
): FixturesToReplay {
  const fixtures: ReplayFixture[] = [];
  const skipped: string[] = [];
  const signed = (loaded: LoadedFixture) => withSigner(loaded, hook ?? loaded.fixture.request.hook, choice);
  for (const path of paths) {
    fixtures.push(...loadFixtures([path]).map(signed));
    if (!statSync(path).isDirectory()) continue;
    const folders = readdirSync(path, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && platformOf(entry.name) !== undefined)
      .map((entry) => entry.name)
      .sort();
    for (const name of folders) {
      const folder = join(path, name);
      const loaded = loadFixtures([folder]);
      const missing = loaded
        .map((f) => hook ?? f.fixture.request.hook)
        .find((to) => choice.hooks?.get(to)?.platform?.name !== name);
      if (missing === undefined) fixtures.push(...loaded.map(signed));
      else
        skipped.push(
          `skipped ${folder}/ (${loaded.length} fixtures): the config has no ${name} hook named ${missing}; replay the folder itself to send them anyway (with --secret)`,
        );
    }
  }
  return { fixtures, skipped };
}

/** The fixture with the signer of the platform it is sent as, if it is one's. */
function withSigner(loaded: LoadedFixture, hook: string, choice: SignerChoice): ReplayFixture {
  const configured = choice.hooks?.get(hook)?.platform;
  const folder = platformOf(basename(dirname(loaded.file)));
  const platform = configured ? platformOf(configured.name) : folder;
  if (!platform) return loaded;
  try {
    if (folder && folder !== platform)
      throw new Error(`a ${folder.name} event, but hook ${hook} is a ${platform.name} hook in the config`);
    return { ...loaded, signer: signerFor(platform, hook, choice) };
  } catch (err) {
    throw new Error(`${loaded.file}: ${(err as Error).message}`, { cause: err });
  }
}

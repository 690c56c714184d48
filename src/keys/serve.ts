import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { KeptKeysStore } from '../store/store.js';
import { ADMIN_TOKEN_FILE, API_KEYS_FILE } from './file.js';
import { type Following, followKeys } from './follow.js';
import { type KeyName, keptKeys } from './kept.js';
import { createKeyRing, type KeyRing } from './ring.js';

/**
 * The keys a serve accepts (docs/reference.md#start-and-set-up). Configured ones (CALLHOOK_API_KEYS,
 * CALLHOOK_ADMIN_TOKEN, or the config file) are fixed for the process's life. Otherwise callhook keeps keys of its own,
 * in the data dir or, given a store that keeps keys (PostgreSQL), in the database, and follows them while serving.
 */

export interface ServeKeys {
  /**
   * The global webhook keys when callhook keeps them; undefined when they are configured, and every hook has
   * its keys in its config. Only hooks that declare no keys of their own follow the ring.
   */
  webhook: KeyRing | undefined;
  admin: KeyRing;
  /** Keys this start made, to be printed once (never logged), with where each is kept. */
  generated: { apiKey?: Generated; adminToken?: Generated };
  /** Stops following; what the rings hold stays accepted. */
  stop(): void;
}

export interface Generated {
  key: string;
  where: string;
}

export interface ServeKeysOptions {
  /** The store's kept keys (PostgreSQL); without it, keys are kept in the data dir. */
  store?: KeptKeysStore;
  log: Logger;
  /** The secrets the logger and the admin replies mask: every key a ring holds is added (keys/ring.ts). */
  secrets: Set<string>;
  everyMs?: number;
}

export async function serveKeys(
  config: Pick<Config, 'apiKeys' | 'adminToken' | 'dataDir'>,
  { store, log, secrets, everyMs }: ServeKeysOptions,
): Promise<ServeKeys> {
  const following: Following[] = [];
  const generated: ServeKeys['generated'] = {};
  const kept = async (name: KeyName, prefix: string, what: string) => {
    const place = keptKeys(name, { dataDir: config.dataDir, store });
    const { keys, generated: made } = await place.ensure(prefix);
    const ring = createKeyRing(keys, { secrets });
    following.push(followKeys(ring, place, { log, what, everyMs }));
    return { ring, made: made === undefined ? undefined : { key: made, where: place.where } };
  };
  const stop = () => {
    for (const f of following) f.stop();
  };
  try {
    let webhook: KeyRing | undefined;
    if (config.apiKeys.length === 0) {
      const { ring, made } = await kept(API_KEYS_FILE, 'chk', 'webhook keys');
      webhook = ring;
      generated.apiKey = made;
    }
    let admin: KeyRing;
    if (config.adminToken === undefined) {
      const { ring, made } = await kept(ADMIN_TOKEN_FILE, 'cha', 'admin token');
      admin = ring;
      generated.adminToken = made;
    } else {
      admin = createKeyRing([config.adminToken], { secrets });
    }
    return { webhook, admin, generated, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

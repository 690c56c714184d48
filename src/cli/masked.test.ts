import { describe, expect, it } from 'vitest';
import { maskedForCli } from './masked.js';

describe("a command's error line", () => {
  it('holds no key given on the command line, nor a secret of the config', () => {
    const env = { CALLHOOK_API_KEYS: 'configured-key-0123456789', CALLHOOK_CONFIG: '' };
    const text = 'HTTP 401: key given-key-0123456789 and configured-key-0123456789 and cli-token-0123456789 refused';
    expect(maskedForCli(text, ['node', 'callhook', 'replay', '--key', 'given-key-0123456789', '--admin-token=cli-token-0123456789'], env)).toBe('HTTP 401: key *** and *** and *** refused');
  });

  it('is kept as it is when the config cannot be read', () => {
    expect(maskedForCli('config file /nowhere.yaml: ENOENT', ['node', 'callhook', 'serve', '--config', '/nowhere.yaml'], {})).toBe('config file /nowhere.yaml: ENOENT');
  });
});

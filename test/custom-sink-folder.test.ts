import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCallhook } from './helpers/cli.js';
import { startReceiver } from './helpers/receiver.js';
import { KEY, post, sampleCall, spawnServer, tempDir, until } from './helpers/server.js';

/**
 * docs/custom-sinks.md, followed as a user follows it: a fresh folder outside the checkout, set up with the
 * page's commands, the page's module saved into it, a config naming it. `npm install` is the one command not run:
 * tests never leave this machine, so the package it names is copied from callhook's own node_modules instead,
 * as a separate copy, which is what an install gives the folder.
 */

const page = readFileSync('docs/custom-sinks.md', 'utf8');

function block(heading: string, language: string): string {
  const section = page.slice(page.indexOf(`## ${heading}`));
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(section);
  if (!match) throw new Error(`no ${language} block under "${heading}" in docs/custom-sinks.md`);
  return match[1]!;
}

function setUpFolder(folder: string): void {
  for (const line of block('A folder of its own', 'sh').split('\n')) {
    const command = line.replace(/#.*$/, '').trim();
    if (command === '' || command.startsWith('mkdir') || command.startsWith('cd ')) continue;
    const install = /^npm install (.+)$/.exec(command);
    if (install) {
      for (const name of install[1]!.split(/\s+/))
        cpSync(join('node_modules', name), join(folder, 'node_modules', name), { recursive: true });
      continue;
    }
    execFileSync('sh', ['-c', command], { cwd: folder, stdio: 'ignore' });
  }
}

describe('a module sink in a folder of its own, as docs/custom-sinks.md says', () => {
  it('loads with its own dependencies, checks its options, masks its secret and delivers', {
    timeout: 60_000,
  }, async () => {
    const folder = tempDir('callhook-sinks-');
    setUpFolder(folder);
    expect(JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).type).toBe('module');
    writeFileSync(join(folder, 'crm-notes.js'), block('The module', 'js'));

    const crm = await startReceiver();
    const token = 'crm-token-5f1e9a3c7b';
    const dataDir = tempDir();
    const config = (url: string) => {
      const path = join(dataDir, `callhook-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(
        path,
        [
          'sinks:',
          '  - name: notes',
          '    type: module',
          `    module: ${join(folder, 'crm-notes.js')}`,
          `    url: ${url}`,
          '    token: ${CRM_TOKEN}',
        ].join('\n'),
      );
      return path;
    };
    try {
      const check = await runCallhook(['config', 'check', '--config', config(`${crm.url}/api/notes`)], {
        CALLHOOK_DATA_DIR: dataDir,
        CRM_TOKEN: token,
      });
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toContain('"notes"');
      expect(check.stdout).not.toContain(token);

      const bad = await runCallhook(['config', 'check', '--config', config('not a url')], {
        CALLHOOK_DATA_DIR: dataDir,
        CRM_TOKEN: token,
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^callhook: sinks\[0\] \(notes\)\.url: /);

      const server = await spawnServer(dataDir, { CALLHOOK_CONFIG: config(`${crm.url}/api/notes`), CRM_TOKEN: token });
      try {
        const { id } = await (
          await post(server.url, sampleCall({ phone_number: '+919812345678', call_summary: 'wants a callback' }), {
            key: KEY,
          })
        ).json();
        await until(() => crm.received.length === 1, { timeoutMs: 20_000 });
        expect(crm.received[0]!.headers).toMatchObject({
          authorization: `Bearer ${token}`,
          'idempotency-key': `${id}:notes`,
        });
        expect(JSON.parse(crm.received[0]!.body)).toEqual({
          phone: '+919812345678',
          note: 'wants a callback',
          call: id,
        });
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    } finally {
      await crm.close();
    }
  });
});

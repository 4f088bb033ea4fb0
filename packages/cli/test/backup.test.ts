import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openGatewayStore } from '@switchyard/gateway';
import { describe, expect, it, onTestFinished } from 'vitest';
import { backupAgent } from '../src/backup.js';

describe('backup', () => {
  it('writes the database copy owner-only (0600) under a umask of 022', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'sy-backup-'));
    const previous = process.umask(0o022);
    onTestFinished(() => {
      process.umask(previous);
      rmSync(root, { recursive: true, force: true });
    });
    const stateDir = path.join(root, 'state');
    mkdirSync(path.join(stateDir, 'gateway'), { recursive: true });
    openGatewayStore(path.join(stateDir, 'gateway', 'gateway.sqlite')).close();
    const dest = path.join(root, 'copy');
    const manifest = await backupAgent({ name: 'demo', stateDir }, dest);
    expect(manifest.files).toContain(path.join('gateway', 'gateway.sqlite'));
    expect(statSync(path.join(dest, 'gateway', 'gateway.sqlite')).mode & 0o777).toBe(0o600);
  });
});

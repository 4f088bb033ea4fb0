/**
 * The gateway's SQLite holds users' messages: its directory is 0700 and the database with its -wal and
 * -shm files 0600 even under umask 0000, and a file left world-readable is narrowed when opened.
 */
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/store/database.js';

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('store file modes', () => {
  let previous: number;
  let dir: string;
  beforeEach(() => {
    previous = process.umask(0o000);
    dir = mkdtempSync(path.join(tmpdir(), 'sy-modes-'));
  });
  afterEach(() => {
    process.umask(previous);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the state directory 0700 and the database, -wal and -shm 0600 under umask 0000', () => {
    const file = path.join(dir, 'state', 'gateway', 'gateway.sqlite');
    const db = openDatabase(file);
    db.exec('CREATE TABLE IF NOT EXISTS probe (x); INSERT INTO probe VALUES (1)');
    try {
      expect(mode(path.join(dir, 'state'))).toBe('700');
      expect(mode(path.dirname(file))).toBe('700');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(mode(f), f).toBe('600');
    } finally {
      db.close();
    }
  });

  it('narrows a database and directory left readable by others', () => {
    const file = path.join(dir, 'gateway.sqlite');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    chmodSync(dir, 0o755);
    openDatabase(file).close();
    expect(mode(file)).toBe('600');
    expect(mode(dir)).toBe('700');
  });
});

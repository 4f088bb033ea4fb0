/**
 * The exchange directory's modes are exact whatever the umask: 2770 (setgid included) and files 0640 when
 * the agent's group is configured, 0700 and 0600 for one user; a file appears only whole. The receiver
 * opens only files directly in the directory, never through a link, and reads the file it checked even
 * when the path is swapped afterwards (the gateway must not upload its own token because a path said so).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  copyIntoExchange,
  type ExchangeOptions,
  openExchangeFile,
  prepareExchange,
  writeExchangeFile,
} from '../src/node/exchange.js';

const mode = (path: string) => (statSync(path).mode & 0o7777).toString(8);
const group = process.getgid?.() ?? 0;

describe.each([0o000, 0o077])('exchange modes under umask %o', (umask) => {
  let previous: number;
  let root: string;
  beforeEach(() => {
    previous = process.umask(umask);
    root = mkdtempSync(join(tmpdir(), 'sy-exchange-'));
  });
  afterEach(() => {
    process.umask(previous);
    rmSync(root, { recursive: true, force: true });
  });

  it('with the agent group: the directory 2770 (setgid) of that group, files 0640, written and copied', async () => {
    const exchange: ExchangeOptions = { dir: join(root, 'state', 'files'), group };
    prepareExchange(exchange);
    expect(mode(exchange.dir)).toBe('2770');
    expect(statSync(exchange.dir).gid).toBe(group);
    const written = await writeExchangeFile(exchange, 'in-1.jpg', Buffer.from('photo'));
    const source = join(root, 'report.pdf');
    writeFileSync(source, 'report');
    chmodSync(source, 0o666); // the copy must not keep the source's mode
    const copied = await copyIntoExchange(exchange, source, 'out-1-0');
    expect(mode(written)).toBe('640');
    expect(mode(copied)).toBe('640');
    expect(readdirSync(exchange.dir).sort()).toEqual(['in-1.jpg', 'out-1-0']); // no `.part` left
  });

  it('for one user: the directory 0700, files 0600', async () => {
    const exchange: ExchangeOptions = { dir: join(root, 'files') };
    prepareExchange(exchange);
    expect(mode(exchange.dir)).toBe('700');
    expect(mode(await writeExchangeFile(exchange, 'in-1.jpg', Buffer.from('x')))).toBe('600');
    const source = join(root, 'notes.txt');
    writeFileSync(source, 'notes', { mode: 0o644 });
    expect(mode(await copyIntoExchange(exchange, source, 'out-1-0'))).toBe('600');
  });

  it('sets a directory left with another mode exactly, both ways', () => {
    const dir = join(root, 'files');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    prepareExchange({ dir, group });
    expect(mode(dir)).toBe('2770');
    prepareExchange({ dir });
    expect(mode(dir)).toBe('700');
  });

  it('never narrows a shared directory like /tmp: it refuses it instead', () => {
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(() => prepareExchange({ dir: shared })).toThrow(/shared directory \(mode 1777\)/);
    expect(mode(shared)).toBe('1777');
  });
});

describe('openExchangeFile', () => {
  let root: string;
  let exchange: ExchangeOptions;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sy-exchange-'));
    exchange = { dir: join(root, 'files') };
    prepareExchange(exchange);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const refused = async (path: string) => {
    const opened = await openExchangeFile(exchange, path);
    if (opened.ok) await opened.handle.close();
    return opened.ok ? 'opened' : opened.problem;
  };

  it('refuses a path outside the directory, through `..`, a link or a FIFO', async () => {
    const secret = join(root, 'telegram-token');
    writeFileSync(secret, '123:secret');
    expect(await refused(secret)).toBe('is not in the exchange directory');
    expect(await refused(join(exchange.dir, '..', 'telegram-token'))).toBe(
      'is not in the exchange directory',
    );
    expect(await refused('files/out-1-0')).toBe('is not in the exchange directory');
    symlinkSync(secret, join(exchange.dir, 'out-1-0'));
    expect(await refused(join(exchange.dir, 'out-1-0'))).toBe('is a link');
    execFileSync('mkfifo', [join(exchange.dir, 'out-2-0')]);
    expect(await refused(join(exchange.dir, 'out-2-0'))).toBe('is not a regular file');
    expect(await refused(join(exchange.dir, 'out-3-0'))).toBe('is gone');
  });

  it('reads the file it opened, even when the path is swapped for another afterwards', async () => {
    const path = await writeExchangeFile(exchange, 'out-1-0', Buffer.from('the report'));
    const opened = await openExchangeFile(exchange, path);
    if (!opened.ok) throw new Error(opened.problem);
    try {
      writeFileSync(join(root, 'other'), 'something else');
      renameSync(join(root, 'other'), path);
      expect(opened.size).toBe('the report'.length);
      expect((await opened.handle.readFile()).toString()).toBe('the report');
    } finally {
      await opened.handle.close();
    }
  });
});

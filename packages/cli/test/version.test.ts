/**
 * `switchyard version`: `--version` used to fail with ERR_PARSE_ARGS_UNKNOWN_OPTION and there was no
 * command at all. In an installed release it names the release from its RELEASE file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatVersion, versionInfo } from '../src/version.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'sy-version-'));
  mkdirSync(path.join(root, 'packages/cli'), { recursive: true });
  writeFileSync(path.join(root, 'packages/cli/package.json'), '{ "version": "9.8.7" }');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('version', () => {
  it('names an installed release, its commit and the Node it was packed with', () => {
    writeFileSync(
      path.join(root, 'RELEASE'),
      'name=switchyard-9.8.7-20260101T000000Z\nversion=9.8.7\ncommit=abc1234\nnode=20.19.1\nnodeAbi=115\nplatform=linux-x64\n',
    );
    const info = versionInfo(root);
    expect(info).toEqual({
      version: '9.8.7',
      release: 'switchyard-9.8.7-20260101T000000Z',
      commit: 'abc1234',
      packedNode: '20.19.1',
      node: process.versions.node,
    });
    expect(formatVersion(info)).toEqual([
      'switchyard 9.8.7 (abc1234)',
      'release switchyard-9.8.7-20260101T000000Z, packed with Node 20.19.1',
      `node ${process.versions.node}`,
    ]);
  });
});

/**
 * The file tools with the real CLI: the scripted model calls `mcp__switchyard__send_file` /
 * `send_photo`, the CLI reaches Switchyard's MCP endpoint from the config the bridge merged, and the
 * bridge hands the rig's gateway side a `file_send` whose copy has the original's bytes. The rig answers `file_sent` like the gateway; the tool result the model sees is checked.
 *
 * The server is an HTTP endpoint the bridge serves itself: `claude` starts no helper process for it, and
 * a `claude` that outlives a bridge restart reaches the next bridge's endpoint.
 *
 * Refusals (outside the working directory, missing, a directory, over the upload limit) must come back
 * as tool errors naming the path and the reason, with no `file_send` at all.
 */
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AppFrame, FrameOf } from '@switchyard/protocol';
import {
  rule,
  say,
  sendFile,
  sendFiles,
  sendPhoto,
  type ToolResult,
  type TurnContext,
} from '@switchyard/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Bridge,
  CONVERSATIONS_DIR,
  conversationDir,
  createBridge,
} from '../../packages/agent-bridge/src/index.js';
import { liveProcesses } from '../processes.js';
import { bridgeOptions, createRig, type Rig, userMessage } from './harness.js';

/** A 1×1 PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('file tools with the real CLI', () => {
  let rig: Rig;
  let bridge: Bridge;
  /** Tool results the model received, by the user text of their turn. */
  const results = new Map<string, ToolResult[]>();
  /** Answer `file_send` frames like the gateway (`manual` holds them back). */
  let manual = false;
  const answered = new Set<string>();
  /** SHA-256 of each copy the gateway side was handed, read before answering (the bridge deletes it then). */
  const copies = new Map<string, string[]>();
  let answering: NodeJS.Timeout | undefined;
  const report = Buffer.from(`quarterly report ${Math.random()}\n`.repeat(2000));

  /** After the tool call: records what the tool returned, then ends the turn. */
  const record = (key: string) => (ctx: TurnContext) => {
    results.set(key, [...ctx.lastToolResults]);
    return say('Done.');
  };

  beforeAll(async () => {
    rig = await createRig([
      rule('send the report', sendFile('out/report.txt', '**Q3** report'), record('report')),
      rule('send the chart', sendPhoto('chart.png'), record('chart')),
      rule('send notes as photo', sendPhoto('notes.txt'), record('notes')),
      rule('send secrets', sendFile('/etc/hostname'), record('outside')),
      rule('send via link', sendFile('link'), record('link')),
      rule('send nothing', sendFile('missing.pdf'), record('missing')),
      rule('send huge', sendFile('huge.bin'), record('huge')),
      rule('send folder', sendFile('out'), record('folder')),
      rule('send album', sendFiles(['chart.png', 'out/report.txt']), record('album')),
      rule('send slowly', sendFile('out/report.txt'), record('restart')),
      rule('send after restart', sendFile('chart.png'), record('after-restart')),
    ]);
    mkdirSync(join(rig.workDir, 'out'));
    writeFileSync(join(rig.workDir, 'out/report.txt'), report);
    writeFileSync(join(rig.workDir, 'chart.png'), PNG);
    writeFileSync(join(rig.workDir, 'notes.txt'), 'not an image');
    symlinkSync('/etc/hostname', join(rig.workDir, 'link'));
    writeFileSync(join(rig.workDir, 'huge.bin'), '');
    truncateSync(join(rig.workDir, 'huge.bin'), 51 * 1024 * 1024); // sparse: costs no disk
    bridge = createBridge(bridgeOptions(rig, { files: { waitMs: 60_000 } }));
    await bridge.start();
    answering = setInterval(() => {
      if (manual) return;
      for (const frame of rig.of('file_send')) {
        if (answered.has(frame.fileId)) continue;
        answered.add(frame.fileId);
        copies.set(
          frame.fileId,
          frame.files.map((f) => sha256(readFileSync(f.path))),
        );
        void rig.send({
          type: 'file_sent',
          fileId: frame.fileId,
          ok: true,
          messageIds: [1000 + answered.size],
        });
      }
    }, 50);
  });

  afterAll(async () => {
    clearInterval(answering);
    await bridge?.stop('shutdown');
    await rig?.cleanup();
  });

  /** Sends `text`, waits for its turn to end, returns the frames of the turn. */
  const turn = async (id: string, text: string): Promise<AppFrame[]> => {
    const since = rig.frames.length;
    await rig.send(userMessage(id, text));
    await rig.waitFor((f) => f.type === 'turn_ended', 90_000, since);
    return rig.frames.slice(since);
  };
  const fileSends = (frames: AppFrame[]): FrameOf<'file_send'>[] =>
    frames.filter((f): f is FrameOf<'file_send'> => f.type === 'file_send');

  it('send_file: the gateway gets a copy with the same bytes, in the turn, with the caption; no prompt', async () => {
    const frames = await turn('f1', 'send the report');
    const [send, ...more] = fileSends(frames);
    expect(more).toHaveLength(0);
    expect(send).toMatchObject({ route: { chatId: 42 }, caption: '**Q3** report' });
    expect(send?.turnId).toBe(frames.find((f) => f.type === 'turn_started')?.turnId);
    expect(send?.files).toEqual([
      expect.objectContaining({
        name: 'report.txt',
        kind: 'document',
        size: report.length,
      }),
    ]);
    expect(copies.get(send?.fileId ?? '')).toEqual([sha256(report)]);
    expect(frames.some((f) => f.type === 'permission_request')).toBe(false);
    expect(frames.find((f) => f.type === 'tool_started')).toMatchObject({
      name: 'mcp__switchyard__send_file',
    });
    const [result] = results.get('report') ?? [];
    expect(result?.isError).toBe(false);
    expect(result?.text).toContain('Sent report.txt');
    // Acknowledged: the copy is gone from the exchange directory.
    expect(existsSync(send?.files[0]?.path ?? '')).toBe(false);
  });

  it('send_photo: a PNG goes as a photo; a text file goes as a document and the result says why', async () => {
    const chart = fileSends(await turn('p1', 'send the chart'));
    expect(chart[0]?.files[0]).toMatchObject({ name: 'chart.png', kind: 'photo', size: PNG.length });
    expect(copies.get(chart[0]?.fileId ?? '')).toEqual([sha256(PNG)]);
    expect(results.get('chart')?.[0]?.isError).toBe(false);
    const notes = fileSends(await turn('p2', 'send notes as photo'));
    expect(notes[0]?.files[0]).toMatchObject({ name: 'notes.txt', kind: 'document' });
    expect(results.get('notes')?.[0]?.text).toContain('not JPEG, PNG or WebP, so it was sent as a document');
  });

  it('send_files: a photo and a document in one album go as documents, in order', async () => {
    const [album] = fileSends(await turn('a1', 'send album'));
    expect(album?.files.map((f) => [f.name, f.kind])).toEqual([
      ['chart.png', 'document'],
      ['report.txt', 'document'],
    ]);
    expect(results.get('album')?.[0]?.text).toContain('Telegram does not mix photos and documents');
  });

  it.each([
    ['o1', 'send secrets', 'outside', 'outside the working directory'],
    ['o2', 'send via link', 'link', 'outside the working directory'],
    ['o3', 'send nothing', 'missing', 'missing.pdf: no such file'],
    ['o4', 'send huge', 'huge', "over Telegram's 50.0 MB upload limit"],
    ['o5', 'send folder', 'folder', 'is a directory'],
  ])('refuses %s (%s) with a tool error and sends nothing', async (id, text, key, why) => {
    const frames = await turn(id, text);
    expect(fileSends(frames)).toHaveLength(0);
    const [result] = results.get(key) ?? [];
    expect(result?.isError).toBe(true);
    expect(result?.text).toContain(why);
  });

  it('a bridge restart while the call waits for Telegram sends the file once and answers the call', async () => {
    manual = true;
    const since = rig.frames.length;
    await rig.send(userMessage('r1', 'send slowly'));
    const first = (await rig.waitFor((f) => f.type === 'file_send', 60_000, since)) as FrameOf<'file_send'>;
    await bridge.stop('restart');
    bridge = createBridge(bridgeOptions(rig, { files: { waitMs: 60_000 } }));
    await bridge.start();
    // The new bridge offers the unsettled file again; the MCP server re-asks on the new socket.
    await rig.waitFor(
      (f) => f.type === 'file_send' && rig.frames.indexOf(f) > rig.frames.indexOf(first),
      30_000,
    );
    const ids = new Set(fileSends(rig.frames.slice(since)).map((f) => f.fileId));
    expect([...ids]).toEqual([first.fileId]);
    await rig.send({ type: 'file_sent', fileId: first.fileId, ok: true, messageIds: [77] });
    await rig.waitFor((f) => f.type === 'turn_ended', 60_000, since);
    expect(results.get('restart')?.[0]).toMatchObject({ isError: false });
    expect(results.get('restart')?.[0]?.text).toContain('Sent report.txt');
    // Each conversation keeps its file outbox's index and MCP config in its own state directory.
    const conversation = join(rig.stateDir, CONVERSATIONS_DIR, conversationDir('42'));
    expect(readdirSync(join(conversation, 'files'))).toEqual(['index.json']);
    // The copies were made in the exchange directory (the gateway's to read), and deleted once sent.
    expect(readdirSync(join(rig.stateDir, 'files'))).toEqual([]);
    expect(readFileSync(join(conversation, 'mcp.json'), 'utf8')).toContain('"switchyard"');
  });

  it('after a bridge restart, the claude still running sends a new file through the new bridge; no helper process', async () => {
    for (const frame of rig.of('file_send')) answered.add(frame.fileId); // settled by hand above
    manual = false;
    const claudePid = rig.recordedPid();
    expect(claudePid).toBeDefined();
    await bridge.stop('restart');
    bridge = createBridge(bridgeOptions(rig, { files: { waitMs: 60_000 } }));
    await bridge.start();
    const frames = await turn('s2', 'send after restart');
    expect(rig.recordedPid()).toBe(claudePid);
    const [send] = fileSends(frames);
    expect(send?.files[0]).toMatchObject({ name: 'chart.png', kind: 'document' });
    expect(copies.get(send?.fileId ?? '')).toEqual([sha256(PNG)]);
    expect(results.get('after-restart')?.[0]).toMatchObject({ isError: false });
    expect(results.get('after-restart')?.[0]?.text).toContain('Sent chart.png');
    // Switchyard's file tools cost the conversation no process of its own beside claude.
    const children = liveProcesses().filter((p) => p.ppid === claudePid);
    expect(children.map((p) => p.command)).toEqual([]);
  });
});

/**
 * Files cross between the two users the systemd units run as (issue 12): the gateway's user, with the
 * agent's group as its primary group (`Group=sy-NAME`), and the agent's own user. Two throwaway system
 * users and the real code paths of the built packages, each in a child process with that user's uid and
 * gid (as the units run them; supplementary groups dropped): the gateway saves an attachment
 * (`saveAttachments`, downloading from a local stand-in for Telegram) that the agent's user reads, and
 * the bridge copies a file the agent sends (`FileOutbox`) that the gateway's user opens as it does before
 * an upload (`openExchangeFile`). Each side's own state stays closed to the other.
 *
 * Needs root (to create users and switch to them) and `useradd`; skipped otherwise. A checkout those users
 * cannot enter is shown to them in a private mount namespace (`readable-checkout.ts`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutView } from './readable-checkout.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const isRoot = process.getuid?.() === 0;
const hasUseradd = ['/usr/sbin/useradd', '/usr/sbin/userdel', '/usr/sbin/groupdel'].every(existsSync);
const view = isRoot && hasUseradd ? checkoutView(root) : undefined;
const skip = !isRoot
  ? 'needs root, to create two users and run a child process as each'
  : !hasUseradd
    ? 'needs useradd and userdel'
    : view?.ok === false
      ? view.reason
      : undefined;

/**
 * One step, run as one user: `role` is the service whose code runs, `step` what it does, `code` the
 * checkout (or its copy) that user can read. Prints one JSON line: what the step produced, or `{ error }`.
 */
const CHILD = `
import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
const [input] = process.argv.slice(1);
const { step, agentFile, data, code } = JSON.parse(input);
const dist = (pkg, file) => code + '/packages/' + pkg + '/dist/' + file;
const { parseConfig } = await import(dist('cli', 'config.js'));
const { exchangeFor } = await import(dist('cli', 'services.js'));
const { prepareExchange, openExchangeFile, silentLogger } = await import(dist('protocol', 'index.js'));
const agent = parseConfig(readFileSync(agentFile, 'utf8'), agentFile, { env: {}, cwd: '/' }).agents[0];
// The environment each unit gives its service (the gateway's RuntimeDirectory=, the agent's StateDirectory=).
const gatewayExchange = () => exchangeFor(agent, 'gateway', { RUNTIME_DIRECTORY: agent.runtimeDir });
const bridgeExchange = () => exchangeFor(agent, 'bridge', { STATE_DIRECTORY: agent.stateDir + '/bridge' });
const out = (value) => console.log(JSON.stringify(value));
const mode = (p) => (statSync(p).mode & 0o7777).toString(8);
try {
  if (step === 'gateway-save') {
    const exchange = gatewayExchange();
    prepareExchange(exchange);
    const { saveAttachments } = await import(dist('gateway', 'io/intake/attachments.js'));
    const server = createServer((_req, res) => res.end(Buffer.from(data)));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const message = { message_id: 1, date: 0, chat: { id: 1, type: 'private' },
      document: { file_id: 'f', file_unique_id: 'u', file_name: 'plan.txt', mime_type: 'text/plain', file_size: data.length } };
    const saved = await saveAttachments(message, {
      api: { getFile: async (id) => ({ file_id: id, file_unique_id: id, file_path: 'documents/plan.txt' }) },
      fileUrl: (p) => 'http://127.0.0.1:' + server.address().port + '/' + p,
      exchange,
    });
    server.close();
    if (!saved.ok) throw new Error(saved.reply);
    const file = saved.attachments[0].path;
    out({ path: file, mode: mode(file), gid: statSync(file).gid, dirMode: mode(exchange.dir) });
  } else if (step === 'agent-send') {
    const exchange = bridgeExchange();
    prepareExchange(exchange);
    const { FileOutbox } = await import(dist('agent-bridge', 'io/mcp/file-outbox.js'));
    let frame;
    const outbox = new FileOutbox({
      dir: agent.stateDir + '/bridge/files', exchange, workDir: agent.workDir, waitMs: 10,
      emit: (f) => { frame = f; }, log: silentLogger,
    });
    const outcome = await outbox.request({ id: '../../gateway/x', tool: 'send_file', paths: ['report.txt'] }, () => ({ route: { chatId: 1 } }));
    outbox.stop();
    if (!frame) throw new Error(outcome.text);
    const file = frame.files[0].path;
    out({ path: file, mode: mode(file), size: frame.files[0].size });
  } else if (step === 'read') {
    // Claude reading an attachment: a plain read by path.
    out({ text: readFileSync(data, 'utf8') });
  } else if (step === 'gateway-open') {
    const opened = await openExchangeFile(gatewayExchange(), data);
    if (!opened.ok) throw new Error(opened.problem);
    const text = (await opened.handle.readFile()).toString();
    await opened.handle.close();
    out({ text });
  } else throw new Error('unknown step ' + step);
} catch (err) {
  out({ error: String(err?.code ?? '') + ' ' + String(err?.message ?? err) });
}
`;

describe.skipIf(skip !== undefined)(
  `files between the gateway's and the agent's users${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    const suffix = randomBytes(3).toString('hex');
    const agentUser = `syt-a-${suffix}`;
    const gatewayUser = `syt-g-${suffix}`;
    const created: string[] = [];
    let base = '';
    let agentFile = '';
    let ids = { agentUid: 0, agentGid: 0, gatewayUid: 0 };

    const idOf = (flag: '-u' | '-g', name: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8' }));
    const run = (as: 'gateway' | 'agent', step: string, data?: unknown): Record<string, unknown> => {
      if (!view?.ok) throw new Error('no view of the checkout (the suite should have been skipped)');
      // The units: the gateway as its own user with the agent's group as primary group; the agent as itself.
      const uid = as === 'gateway' ? ids.gatewayUid : ids.agentUid;
      const input = JSON.stringify({ step, agentFile, data, code: view.root });
      const child = view.asUser(uid, ids.agentGid, [
        process.execPath,
        '--input-type=module',
        '-e',
        CHILD,
        input,
      ]);
      const result = spawnSync(child.command, child.args, {
        ...(child.ids ? { uid, gid: ids.agentGid } : {}),
        cwd: '/',
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        encoding: 'utf8',
        timeout: 8000,
      });
      const line = result.stdout.trim().split('\n').at(-1) ?? '';
      if (!line.startsWith('{')) throw new Error(`${as} ${step}: ${result.stdout}${result.stderr}`);
      return JSON.parse(line) as Record<string, unknown>;
    };

    beforeAll(() => {
      for (const user of [agentUser, gatewayUser]) {
        execFileSync('useradd', [
          '--system',
          '--user-group',
          '--no-create-home',
          '--shell',
          '/usr/sbin/nologin',
          user,
        ]);
        created.push(user);
      }
      ids = {
        agentUid: idOf('-u', agentUser),
        agentGid: idOf('-g', agentUser),
        gatewayUid: idOf('-u', gatewayUser),
      };
      // The layout the units make: state/ root's, state/gateway and state/bridge each side's own (0700),
      // the working directory the agent's. The exchange directory is left to the gateway's code to make
      // (state/ writable by it here; under the units the ExecStartPre= line makes it).
      base = mkdtempSync(path.join(tmpdir(), 'sy-xfer-'));
      chmodSync(base, 0o755);
      const state = path.join(base, 'state');
      mkdirSync(state, { mode: 0o755 });
      chownSync(state, ids.gatewayUid, ids.agentGid);
      chmodSync(state, 0o755);
      for (const [dir, uid] of [
        ['gateway', ids.gatewayUid],
        ['bridge', ids.agentUid],
        ['work', ids.agentUid],
      ] as const) {
        const at = path.join(dir === 'work' ? base : state, dir);
        mkdirSync(at, { mode: 0o700 });
        chownSync(at, uid, ids.agentGid);
      }
      writeFileSync(path.join(base, 'work', 'report.txt'), 'quarterly numbers');
      chownSync(path.join(base, 'work', 'report.txt'), ids.agentUid, ids.agentGid);
      writeFileSync(path.join(state, 'gateway', 'gateway.sqlite'), 'the gateway alone');
      chownSync(path.join(state, 'gateway', 'gateway.sqlite'), ids.gatewayUid, ids.agentGid);
      agentFile = path.join(base, 'switchyard.yaml');
      writeFileSync(
        agentFile,
        JSON.stringify({
          agents: [
            {
              name: 'xfer',
              allow: [1],
              workDir: path.join(base, 'work'),
              stateDir: state,
              runtimeDir: path.join(base, 'run'),
            },
          ],
        }),
      );
      chmodSync(agentFile, 0o644);
    });

    afterAll(() => {
      if (view?.ok) view.remove();
      if (base) rmSync(base, { recursive: true, force: true });
      for (const user of created) spawnSync('userdel', [user]);
    });

    it("the agent's user reads an attachment the gateway saved, and the gateway's user a file the agent sent", () => {
      const saved = run('gateway', 'gateway-save', [...Buffer.from('the plan')]);
      expect(saved.error).toBeUndefined();
      expect(saved).toMatchObject({ mode: '640', gid: ids.agentGid, dirMode: '2770' });
      expect(path.dirname(String(saved.path))).toBe(path.join(base, 'state', 'files'));
      expect(run('agent', 'read', saved.path)).toEqual({ text: 'the plan' });

      const sent = run('agent', 'agent-send');
      expect(sent.error).toBeUndefined();
      expect(sent).toMatchObject({ mode: '640', size: 'quarterly numbers'.length });
      // In the exchange directory, under the bridge's own name (the call's id is not a path).
      expect(path.dirname(String(sent.path))).toBe(path.join(base, 'state', 'files'));
      expect(run('gateway', 'gateway-open', sent.path)).toEqual({ text: 'quarterly numbers' });
    });

    it("each side's own state stays closed to the other (the two really are different users)", () => {
      expect(run('agent', 'read', path.join(base, 'state', 'gateway', 'gateway.sqlite')).error).toMatch(
        /EACCES/,
      );
      expect(run('gateway', 'read', path.join(base, 'work', 'report.txt')).error).toMatch(/EACCES/);
      // A file_send naming the gateway's own file is refused before anything is opened.
      expect(
        run('gateway', 'gateway-open', path.join(base, 'state', 'gateway', 'gateway.sqlite')).error,
      ).toMatch(/not in the exchange directory/);
    });
  },
);

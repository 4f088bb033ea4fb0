/**
 * The part of the handshake that must work across versions: reading which protocol version a peer's
 * `hello` (or `welcome`) claims before the frame is validated, and the words of the refusal when it is
 * not this side's. A peer of another version may shape its handshake otherwise (a field added, renamed
 * or gone), and must still be told "another version, install the same release" rather than "a bad
 * frame". With the bridge on another host the two sides are upgraded apart, so the refusal names each
 * side's release and host. Pure: no I/O, importable by a core.
 */
import { PROTOCOL_VERSION } from './messages/frame.js';

/** What a handshake frame says of its sender, read without validating it. */
export interface HandshakeVersion {
  version: number;
  release: string | undefined;
  host: string | undefined;
}

/**
 * The version a handshake frame claims, with its release and host when it gives them as text.
 * Undefined when `value` is not a `hello` or `welcome` with an integer `version`.
 */
export function handshakeVersion(value: unknown): HandshakeVersion | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { type, version, release, host } = value as Record<string, unknown>;
  if ((type !== 'hello' && type !== 'welcome') || !Number.isInteger(version)) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 200) : undefined);
  return { version: version as number, release: text(release), host: text(host) };
}

/**
 * The refusal of a peer whose version is not {@link PROTOCOL_VERSION}: which side refuses, which
 * release on which host each side runs, which version each speaks, and what to do. `role` is this
 * side's (the server is the gateway).
 */
export function versionMismatchText(
  role: 'server' | 'client',
  self: { release: string | undefined; host: string | undefined },
  peer: HandshakeVersion,
): string {
  const [mine, theirs] = role === 'server' ? ['gateway', 'bridge'] : ['bridge', 'gateway'];
  const where = (release: string | undefined, host: string | undefined): string => {
    const parts = [release && `release ${release}`, host && `on ${host}`].filter(Boolean);
    return parts.length === 0 ? '' : ` (${parts.join(' ')})`;
  };
  const apart = peer.host !== undefined && self.host !== undefined && peer.host !== self.host;
  return (
    `protocol version ${peer.version} is not supported by this ${mine}${where(self.release, self.host)}, ` +
    `which speaks version ${PROTOCOL_VERSION}; the ${theirs}${where(peer.release, peer.host)} speaks ` +
    `version ${peer.version}: install the same Switchyard release for the gateway and the bridge` +
    (apart ? ', on both hosts' : '')
  );
}

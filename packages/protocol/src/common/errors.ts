/**
 * The protocol's failure domain: setting up the socket went wrong in a way the operator must fix.
 * Bad input from a peer is not an exception; it is answered with an `error` frame (see `connection.ts`).
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

/**
 * @switchyard/protocol — the typed channel between the gateway (listens) and an agent's bridge
 * (connects): the frame union and its validation, the byte codec, and the reliable socket endpoints.
 *
 * This face re-exports both parts, for shells. A core imports `@switchyard/protocol/common` (the pure
 * part: `src/common/`) alone; loading this index loads `node:net` and `node:fs` with `src/node/`.
 */
export * from './common/index.js';
export * from './node/index.js';

/** A local stand-in for an OpenAI-compatible speech-to-text server, for tests and the sandbox. */
export { oggOpusNote } from './ogg-note.js';
export {
  createTranscriptionServer,
  type HeardFile,
  SAYS_MARKER,
  sandboxTranscript,
  type TranscriptionRequestRecord,
  type TranscriptionServer,
  type TranscriptionServerOptions,
} from './transcription-server.js';

/**
 * The scripted model's contract: its options, the handle `createScriptedModel` returns, and what it
 * records of each request. The server is `scripted-model.ts`.
 */
import type { ReplyBlock } from './reply.js';
import type { RequestView } from './request.js';
import type { Rule, Script } from './script.js';

/** How a recorded request was answered. */
export type Answer =
  | {
      readonly type: 'reply';
      readonly messageId: string;
      readonly blocks: readonly ReplyBlock[];
      readonly stopReason: string;
      /** False when the client went away before the stream ended (an interrupt, a killed CLI). */
      readonly completed: boolean;
    }
  | { readonly type: 'error'; readonly status: number; readonly errorType: string }
  | { readonly type: 'hang' }
  | { readonly type: 'other'; readonly status: number };

/** One request the model received. */
export interface RecordedRequest {
  /** Position in `requests`. */
  readonly index: number;
  /** When it arrived (`Date.now()`): the order of events across the model and Telegram, when a run fails. */
  readonly at: number;
  readonly method: string;
  /** Path and query as sent, e.g. `/v1/messages?beta=true`. */
  readonly url: string;
  /** Headers, without `x-api-key` and `authorization`. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  readonly body: unknown;
  /** For Messages requests: who asked, the user text, and which step of the turn was served. */
  readonly view?: RequestView & { readonly step: number };
  /** Filled in once answered (a hang is recorded as such at once). */
  answer?: Answer;
}

/** Options of {@link createScriptedModel}. */
export interface ScriptedModelOptions {
  /** The script, or just its rules (default: {@link defaultScript}, the sandbox demo). */
  readonly script?: Script | readonly Rule[];
  /** Characters per streamed delta (default 16). */
  readonly chunkSize?: number;
  /** Pause before each streamed delta in ms (default 0); a reply may override it. */
  readonly chunkDelayMs?: number;
  /** Interface to listen on (default 127.0.0.1). */
  readonly host?: string;
  /** Port (default 0: any free port). */
  readonly port?: number;
  /** Called for every request once it is recorded (before it is answered). */
  readonly onRequest?: (request: RecordedRequest) => void;
}

/** A running (or startable) scripted model. */
export interface ScriptedModel {
  /** Listens; resolves with the base URL to put in `ANTHROPIC_BASE_URL` (no trailing slash). */
  start(): Promise<{ readonly baseUrl: string }>;
  /** Ends open streams and hung requests, closes the server; resolves once it is closed. Idempotent. */
  stop(): Promise<void>;
  /** Every request so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** The Messages requests (`POST /v1/messages`) so far. */
  messageRequests(): readonly RecordedRequest[];
  /**
   * Resolves with the first request (already recorded or still to come) matching `predicate`, from index
   * `since` on (checked when a request arrives and again once its `answer` is known); rejects after
   * `timeoutMs` (default 30 s) or when `signal` aborts.
   */
  waitForRequest(
    predicate?: (r: RecordedRequest) => boolean,
    options?: { readonly since?: number; readonly timeoutMs?: number; readonly signal?: AbortSignal },
  ): Promise<RecordedRequest>;
  /** Replaces the script; turns in progress continue under the new one. */
  setScript(script: Script | readonly Rule[]): void;
  /** The base URL once started. */
  readonly baseUrl: string | undefined;
}

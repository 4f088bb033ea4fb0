/**
 * The reply machine's vocabulary: its state, inputs, actions and the environment of each step. The
 * rules are in `reply.ts`; see its header for the modes and invariants.
 */

/** Least time between two drafts of one reply. */
export const DRAFT_EVERY_MS = 600;
/** An unchanged draft is sent again after this long, inside its 30-second lifetime. */
export const DRAFT_REFRESH_MS = 20_000;

/** How the reply is shown while it grows; see `reply.ts`'s header. */
export type ReplyMode = 'draft' | 'edit' | 'classic';

/** What a message (or a draft) is made to show. */
export type Content =
  | { readonly kind: 'rich'; readonly markdown: string }
  | { readonly kind: 'html'; readonly html: string; readonly text: string }
  | { readonly kind: 'plain'; readonly text: string };

/** What the shell knows at the moment of an input. */
export interface ReplyEnv {
  /** The clock's time. */
  readonly now: number;
  /** Milliseconds until the chat's draft bucket allows a draft (0: now). */
  readonly draftDelay: number;
  /** Whether the Bot API server has rich messages (false once a "method not found" was learnt). */
  readonly rich: boolean;
}

/** How an operation ended, as the shell classified Telegram's answer. */
export type Outcome =
  | { readonly kind: 'ok'; readonly messageId?: number }
  | {
      readonly kind: 'not_modified' | 'gone' | 'html_refused' | 'rich_refused' | 'missing' | 'failed';
      readonly error?: string;
    };

/** An input of the machine. */
export type ReplyInput =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'thinking' }
  | { readonly kind: 'stop' }
  | { readonly kind: 'finish'; readonly markdown: string }
  | { readonly kind: 'tick' }
  /** The courier runs the call of `lane` action `seq` now: the next action is performed inside it. */
  | { readonly kind: 'granted'; readonly seq: number }
  /** The courier dropped the call of `lane` action `seq` without running it. */
  | { readonly kind: 'dropped'; readonly seq: number }
  | { readonly kind: 'outcome'; readonly seq: number; readonly outcome: Outcome };

/** An action for the shell. `seq` names the operation whose outcome (or grant) is to be reported. */
export type ReplyAction =
  | { readonly kind: 'draft'; readonly seq: number; readonly content: Content }
  /** Queue a courier call (`replaces`: under the reply's key, taking the place of a pending one). */
  | {
      readonly kind: 'lane';
      readonly seq: number;
      readonly priority: 'stream' | 'content';
      readonly replaces: boolean;
    }
  | { readonly kind: 'edit'; readonly seq: number; readonly messageId: number; readonly content: Content }
  /** Send a new message at index `slot` of `ids` (`replyTo`: as a reply to the turn's opener). */
  | {
      readonly kind: 'send';
      readonly seq: number;
      readonly slot: number;
      readonly content: Content;
      readonly replyTo: boolean;
    }
  | { readonly kind: 'delete'; readonly seq: number; readonly messageId: number }
  | { readonly kind: 'persist'; readonly ids: readonly number[] }
  | { readonly kind: 'warn'; readonly event: string; readonly error?: string | undefined }
  | { readonly kind: 'done'; readonly ok: boolean };

/** The operation in flight. */
export type Operation =
  | { readonly phase: 'queued'; readonly seq: number }
  | {
      readonly phase: 'running';
      /** Whether it belongs to the live view (a draft, a live edit or send) rather than the final render. */
      readonly live: boolean;
      readonly seq: number;
      readonly does: 'draft' | 'edit' | 'send' | 'delete';
      readonly slot: number;
      readonly content: Content | undefined;
      /** The text version the operation shows. */
      readonly version: number;
      /** Whether the live view is complete for `version` once this operation went out. */
      readonly complete: boolean;
    };

/** The reply's state; see the module comment. */
export interface ReplyState {
  readonly mode: ReplyMode;
  readonly format: ReplyFormat;
  readonly draftEveryMs: number;
  readonly draftRefreshMs: number;
  /** The reply's messages, in order: the one list. */
  readonly ids: readonly number[];
  /** What each message of `ids` shows (its content's text), where known. */
  readonly shown: readonly (string | undefined)[];
  /** The latest reply text and its version (0: no text yet). */
  readonly text: string;
  readonly version: number;
  readonly op: Operation | undefined;
  /** The last operation number handed out. */
  readonly seq: number;
  /** Live edits: the version fully shown, and a version whose rich edit was refused (shown plain). */
  readonly liveSeen: number;
  readonly livePlain: number;
  /** Drafts: started (thinking or text), stopped (the button), when the last went and what it showed. */
  readonly drafting: boolean;
  readonly stopped: boolean;
  readonly draftAt: number;
  readonly draftVersion: number;
  readonly final: FinalPlan | undefined;
  readonly done: boolean;
}

/** One step's result: the new state, the actions in order, and when to `tick` next (if at all). */
export interface ReplyStep {
  readonly state: ReplyState;
  readonly actions: readonly ReplyAction[];
  readonly wakeAt: number | undefined;
}

/** What a reply starts from. */
export interface ReplyInit {
  mode: ReplyMode;
  format: ReplyFormat;
  /** Messages the reply owns already (a placeholder, or those a previous process left), in order. */
  ids: readonly number[];
  draftEveryMs?: number;
  draftRefreshMs?: number;
}

/** The state of a reply that has shown nothing yet. */
export function initialReply(init: ReplyInit): ReplyState {
  return {
    mode: init.mode,
    format: init.format,
    draftEveryMs: init.draftEveryMs ?? DRAFT_EVERY_MS,
    draftRefreshMs: init.draftRefreshMs ?? DRAFT_REFRESH_MS,
    ids: [...init.ids],
    shown: init.ids.map(() => undefined),
    text: '',
    version: 0,
    op: undefined,
    seq: 0,
    liveSeen: 0,
    livePlain: -1,
    drafting: false,
    stopped: false,
    draftAt: Number.NEGATIVE_INFINITY,
    draftVersion: -1,
    final: undefined,
    done: false,
  };
}

/**
 * How the reply's text becomes message contents: pure functions the shell supplies (`core/text/markdown.ts`,
 * `core/text/rich-markdown.ts`), so the machine knows Telegram's limits without importing the renderers.
 */
export interface ReplyFormat {
  /** The text as plain pieces of at most 4096 characters, one per message. */
  plainPieces(text: string): readonly string[];
  /** A live text as one rich message's Markdown: its first or last part when it needs more than one. */
  richLive(text: string, which: 'first' | 'last'): string;
  /** The final Markdown as rich messages (each within 32,768 characters). */
  richParts(markdown: string): readonly string[];
  /** The final Markdown as HTML messages, each with its own plain text (the same characters). */
  htmlParts(markdown: string): readonly { readonly html: string; readonly text: string }[];
}

/** The final render in progress: the parts at the current level, and the slot being placed. */
export interface FinalPlan {
  /** The final Markdown, kept to re-plan the parts at the HTML level after a rich refusal. */
  readonly source: string;
  readonly parts: readonly Content[];
  /** The index of the part being placed. */
  readonly slot: number;
  /** Whether a final call was queued already (the first one replaces a pending live call). */
  readonly started: boolean;
  readonly failed: boolean;
}

/** The text a content puts in a message (what `shown` records). */
export function textOf(content: Content): string {
  return content.kind === 'rich' ? content.markdown : content.kind === 'html' ? content.html : content.text;
}

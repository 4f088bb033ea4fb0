// The sandbox chat view. It loads every chat once from /web/api/state, then applies the server's events
// (/web/api/events, server-sent) to that copy and re-renders the open chat. No framework, no build step.
// Message HTML comes from the server's Telegram-HTML renderer, which escapes all text; links are further
// limited to http(s)/tg/mailto here.

const $ = (id) => document.getElementById(id);
const HEADERS = { 'x-sandbox-view': '1' };
const ACTION_MS = 5_000; // Telegram shows a chat action for 5 s
const DRAFT_MS = 30_000; // a draft is a 30 s preview
// Telegram's limits on what a user sends: a message's text, a file's caption (in characters).
const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;
/** Within this many pixels of the end, the list counts as read to the end: it follows new messages. */
const FOLLOW_PX = 80;

const state = {
  bot: null,
  user: null,
  banner: null,
  /** chatId -> { chat, messages: Map<id, message>, action, draft } */
  chats: new Map(),
  current: null,
  /** 0 = General (or a chat without topics), else a thread id */
  topic: 0,
  replyTo: null,
  /**
   * Why the view cannot reach the sandbox: false (it can), 'down' (no answer: stopped, or starting), or
   * 'restarted' (it answers but refuses this tab's key: a new run, whose key this tab cannot know).
   */
  offline: false,
  /**
   * The list shows its end and keeps showing it as messages arrive, edits grow them and pictures load.
   * Only the reader's own scrolling changes it (see the `scroll` listener); sending a message sets it.
   */
  follow: true,
};

/** Rendered message nodes by `chatId:messageId`, reused while the message is unchanged. */
const rendered = new Map();

// --- data -----------------------------------------------------------------------------------------

function entry(chatId) {
  let e = state.chats.get(chatId);
  if (!e) {
    e = { chat: null, messages: new Map(), action: null, draft: null };
    state.chats.set(chatId, e);
  }
  return e;
}

async function load() {
  const res = await fetch('/web/api/state');
  if (res.status === 403) {
    restarted();
    return;
  }
  const data = await res.json();
  state.bot = data.bot;
  state.user = data.user;
  state.banner = data.banner;
  state.chats.clear();
  for (const view of data.chats) {
    const e = entry(view.chat.id);
    e.chat = view.chat;
    for (const m of [...view.messages, ...view.deleted]) e.messages.set(m.messageId, m);
    e.action = view.actions.at(-1) ?? null;
    // A draft the bot's next message ended is gone, as it is for a page that saw it live.
    const draft = view.drafts.at(-1);
    e.draft = draft && !draft.superseded ? draft : null;
  }
  if (state.current === null || !state.chats.has(state.current)) {
    state.current = data.chats[0]?.chat.id ?? null;
  }
  render();
}

function apply(event) {
  switch (event.type) {
    case 'chat':
      entry(event.chat.id).chat = event.chat;
      break;
    case 'message': {
      const e = entry(event.message.chatId);
      e.messages.set(event.message.messageId, event.message);
      if (event.message.from === 'bot') {
        e.draft = null;
        e.action = null;
      } else if (event.message.chatId === state.current) {
        // The user's own new message is what they look at next, wherever the list was.
        followFromHere();
      }
      break;
    }
    case 'edit':
    case 'delete':
    case 'reaction':
      entry(event.message.chatId).messages.set(event.message.messageId, event.message);
      break;
    case 'pins': {
      const e = entry(event.chatId);
      if (e.chat) e.chat.pinned = event.pinned;
      for (const m of e.messages.values()) m.pinned = event.pinned.includes(m.messageId);
      break;
    }
    case 'action':
      entry(event.action.chatId).action = { ...event.action, seenAt: Date.now() };
      setTimeout(render, ACTION_MS + 50);
      break;
    case 'draft':
      entry(event.draft.chatId).draft = { ...event.draft, seenAt: Date.now() };
      setTimeout(render, DRAFT_MS + 50);
      break;
    case 'draft_stop': {
      // Stopped: the draft stays shown only if it was sent with keep_on_stop (until the bot's next message).
      const e = entry(event.stop.chatId);
      if (e.draft?.keepOnStop) e.draft.stopped = true;
      else e.draft = null;
      break;
    }
    case 'callback_answer':
      if (event.query.answer?.text) {
        if (event.query.answer.showAlert) alert(event.query.answer.text);
        else toast(event.query.answer.text);
      }
      break;
    default:
      return;
  }
  render();
}

let events;
function connect() {
  events = new EventSource('/web/api/events');
  let opened = false;
  events.onopen = () => {
    if (opened) load(); // a reconnect: events may have been missed
    opened = true;
    state.offline = false;
    render();
  };
  events.onerror = () => {
    if (state.offline === 'restarted') return;
    state.offline = 'down';
    render();
    // EventSource does not say why: ask. A sandbox that answers 403 runs with a new key (it restarted),
    // and retrying with this tab's old one would say "is it still running?" forever.
    fetch('/web/api/state', { cache: 'no-store' })
      .then((res) => {
        if (res.status === 403) restarted();
      })
      .catch(() => {});
  };
  events.onmessage = (e) => apply(JSON.parse(e.data));
}

/** The sandbox refused this tab's key: it restarted. Stop retrying and say how to get back in. */
function restarted() {
  state.offline = 'restarted';
  events?.close();
  render();
}

// --- actions --------------------------------------------------------------------------------------

/**
 * POSTs to the view's API; the answer's data, or undefined when the request failed (said in a toast, or
 * in the header when the sandbox restarted), so a caller keeps what the user typed for another try.
 */
async function post(path, body) {
  return answered(
    fetch(path, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/** A request's answer as {@link post} returns it. */
async function answered(request) {
  try {
    const res = await request;
    if (res.status === 403) {
      restarted();
      return undefined;
    }
    const data = await res.json().catch(() => ({}));
    if (res.ok) return data;
    toast(data.error ?? 'request failed');
  } catch {
    toast('not sent: the sandbox does not answer');
  }
  return undefined;
}

/** What is wrong with sending `text` (a caption with a file), as Telegram would refuse it; else undefined. */
function tooLong(text, file) {
  const limit = file ? CAPTION_LIMIT : TEXT_LIMIT;
  if (text.length <= limit) return undefined;
  const what = file ? 'a caption' : 'a message';
  const count = (n) => n.toLocaleString('en');
  const fix = file ? 'Shorten it.' : 'Shorten it, or send it as a file.';
  return `Telegram takes at most ${count(limit)} characters in ${what}; this one has ${count(text.length)}. ${fix}`;
}

/** An audio file's length in seconds, as the browser decodes its header; undefined when it cannot. */
function audioSeconds(file) {
  return new Promise((resolve) => {
    const url = URL.createObjectURL(file);
    const audio = new Audio();
    const done = (value) => {
      URL.revokeObjectURL(url);
      resolve(value);
    };
    audio.preload = 'metadata';
    audio.onloadedmetadata = () => done(Number.isFinite(audio.duration) ? audio.duration : undefined);
    audio.onerror = () => done(undefined);
    setTimeout(() => done(undefined), 3000);
    audio.src = url;
  });
}

/** A voice note's length as Telegram shows it: m:ss. */
function clock(seconds) {
  const s = Math.max(0, Math.round(seconds ?? 0));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

async function send(event) {
  event.preventDefault();
  const text = $('text').value;
  const file = $('file').files[0];
  const chatId = state.current;
  if (chatId === null) return;
  const threadId = state.topic || undefined;
  // Nothing typed is cleared unless it was sent: a refused or failed send leaves it for another try.
  const problem = tooLong(text, file);
  if (problem) {
    toast(problem);
    return;
  }
  if (file) {
    const form = new FormData();
    form.set('chatId', String(chatId));
    form.set('caption', text);
    if (threadId) form.set('threadId', String(threadId));
    form.set('file', file, file.name);
    // An audio file goes as a voice note, with the length the browser measures (as a phone reports it).
    if (file.type.startsWith('audio/')) {
      form.set('voice', '1');
      const seconds = await audioSeconds(file);
      if (seconds !== undefined) form.set('duration', String(Math.max(1, Math.round(seconds))));
    }
    const sent = await answered(fetch('/web/api/upload', { method: 'POST', headers: HEADERS, body: form }));
    if (!sent) return;
    $('file').value = '';
    $('file-name').hidden = true;
  } else if (text.trim() !== '') {
    const sent = await post('/web/api/send', { chatId, text, threadId, replyTo: state.replyTo ?? undefined });
    if (!sent) return;
  } else {
    return;
  }
  followFromHere();
  $('text').value = '';
  $('text').style.height = 'auto';
  state.replyTo = null;
  renderReplyBar();
}

function press(message, button) {
  post('/web/api/press', {
    chatId: message.chatId,
    messageId: message.messageId,
    data: button.callback_data,
  });
}

// --- rendering ------------------------------------------------------------------------------------

let toastTimer;
function toast(text) {
  const t = $('toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    t.hidden = true;
  }, 2500);
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) if (child) node.append(child);
  return node;
}

function safeHtml(html) {
  const div = el('div', { className: 'text' });
  div.innerHTML = html;
  for (const a of div.querySelectorAll('a')) {
    if (!/^(https?:|tg:|mailto:)/i.test(a.getAttribute('href') ?? '')) a.removeAttribute('href');
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
  }
  // Telegram clients draw blockquotes and code blocks as blocks and swallow the line break that
  // follows one; with pre-wrap that break would be an extra empty line.
  for (const block of div.querySelectorAll('blockquote, pre')) {
    const next = block.nextSibling;
    if (next?.nodeType === Node.TEXT_NODE && next.data.startsWith('\n')) next.data = next.data.slice(1);
  }
  return div;
}

/** One line of what a message says, as a chat list or a quote shows it: words only, no markup. */
function snippet(message) {
  if (!message) return '';
  const receiver = message.ephemeral?.receiver;
  if (receiver && receiver.id !== state.user?.id) return `👁 A message only ${receiver.first_name} sees`;
  if (message.kind === 'photo') return `🖼 ${message.text || 'Photo'}`;
  if (message.kind === 'document') return `📄 ${message.file?.fileName ?? 'File'} ${message.text}`;
  if (message.kind === 'voice')
    return `🎤 Voice message (${clock(message.file?.duration)}) ${message.text}`.trim();
  if (message.kind === 'service') return serviceText(message);
  // A rich message's text is its Markdown source: show the words of its rendering instead.
  return message.rich ? plainText(message.html) : message.text;
}

/** The words of `html`, blocks and table cells kept apart by a space; parsed inert (nothing loads or runs). */
function plainText(html) {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const blocks = 'p, h1, h2, h3, h4, h5, h6, li, tr, th, td, pre, blockquote, summary, br';
  for (const node of doc.body.querySelectorAll(blocks)) node.after(' ');
  return (doc.body.textContent ?? '').replace(/\s+/g, ' ').trim();
}

/** `text` cut to `max` characters as a reader counts them (an emoji, flags and skin tones included, is one). */
function cutChars(text, max) {
  const chars =
    typeof Intl.Segmenter === 'function'
      ? Array.from(new Intl.Segmenter().segment(text), (s) => s.segment)
      : Array.from(text);
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text;
}

function serviceText(message) {
  const who =
    message.from === 'bot' ? (state.bot?.first_name ?? 'Bot') : (message.sender.first_name ?? 'User');
  if (message.service?.type === 'pinned_message') {
    const pinned = entry(message.chatId).messages.get(message.service.messageId);
    const text = snippet(pinned).replace(/\s+/g, ' ');
    const silent = message.silent ? ' (silently)' : '';
    return `${who} pinned “${cutChars(text, 40)}”${silent}`;
  }
  if (message.service?.type === 'forum_topic_created') return `# Topic “${message.service.name}” created`;
  return '';
}

function time(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

function fullTime(ms) {
  return new Date(ms).toLocaleString([], { hourCycle: 'h23' });
}

/** A round avatar with initials, its colour fixed by the id (as Telegram picks one). */
function avatar(title, id, className = '') {
  const initials = (title ?? '?')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((word) => [...word][0]?.toUpperCase() ?? '')
    .join('');
  let hash = 0;
  for (const ch of String(id)) hash = (hash * 31 + ch.charCodeAt(0)) % 1009;
  return el('div', { className: `avatar c${hash % 5} ${className}`, textContent: initials });
}

function fileSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * The chat's topics as tabs: a forum's, or a private chat's with topics (Bot API 9.3: its messages carry
 * `message_thread_id`). A thread the chat's record does not name yet is shown by its id.
 */
function topicsOf(e) {
  const chat = e.chat;
  if (!chat) return undefined;
  const known = chat.topics ?? [];
  const seen = new Set(known.map((t) => t.threadId));
  const extra = [];
  for (const m of e.messages.values()) {
    if (m.threadId !== undefined && !seen.has(m.threadId)) {
      seen.add(m.threadId);
      extra.push({ threadId: m.threadId, name: `Topic ${m.threadId}` });
    }
  }
  if (!chat.isForum && known.length === 0 && extra.length === 0) return undefined;
  return [{ threadId: 0, name: chat.isForum ? 'General' : 'Chat' }, ...known, ...extra];
}

function inTopic(message) {
  if (!topicsOf(entry(message.chatId))) return true;
  return (message.threadId ?? 0) === state.topic;
}

/** The message's node: the one rendered before while nothing it shows has changed. */
function messageNode(message, e) {
  const target =
    message.replyToMessageId === undefined ? undefined : e.messages.get(message.replyToMessageId);
  const pinnedTarget =
    message.service?.type === 'pinned_message' ? e.messages.get(message.service.messageId) : undefined;
  const signature = JSON.stringify([message, snippet(target), snippet(pinnedTarget), e.chat?.type]);
  const key = `${message.chatId}:${message.messageId}`;
  const cached = rendered.get(key);
  if (cached?.signature === signature) return cached.node;
  const node = renderMessage(message, e);
  rendered.set(key, { signature, node });
  return node;
}

function renderMessage(message, e) {
  if (message.kind === 'service') {
    const text = serviceText(message);
    return el('div', { className: 'service', textContent: text, title: text });
  }
  const receiver = message.ephemeral?.receiver;
  if (receiver && receiver.id !== state.user?.id) {
    // Another member's ephemeral message: this user's client would not show it; the sandbox says it is there.
    const text = `👁 A message only ${receiver.first_name} sees`;
    return el('div', { className: 'service ephemeral-other', textContent: text, title: text });
  }
  const classes = ['msg', message.from];
  if (message.deleted) classes.push('deleted');
  if (receiver) classes.push('ephemeral');
  const node = el('div', { className: classes.join(' ') });
  node.dataset.id = String(message.messageId);
  const bubble = el('div', { className: 'bubble' });
  // As in Telegram: names only in groups, and never on the user's own messages.
  if (e.chat?.type !== 'private' && message.from === 'bot') {
    const name = message.from === 'bot' ? state.bot?.first_name : message.sender.first_name;
    bubble.append(el('div', { className: 'sender', textContent: name ?? '' }));
  }
  if (message.replyToMessageId !== undefined) {
    const target = e.messages.get(message.replyToMessageId);
    bubble.append(el('div', { className: 'quote', textContent: snippet(target) || 'message' }));
  }
  if (message.kind === 'photo' && message.file) {
    const img = el('img', {
      className: 'photo',
      src: `/web/api/file/${encodeURIComponent(message.file.fileId)}`,
      alt: 'photo',
    });
    // A picture has no height until it loads: the list grows after it was scrolled to its end.
    img.addEventListener('load', followEnd);
    bubble.append(img);
  }
  if (message.kind === 'document' && message.file) {
    const name = message.file.fileName ?? 'file';
    const icon = el('span', { className: 'icon' });
    icon.innerHTML =
      '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path d="M6 2h8l6 6v12a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm7 1.5V9h5.5" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/></svg>';
    bubble.append(
      el(
        'a',
        {
          className: 'document',
          href: `/web/api/file/${encodeURIComponent(message.file.fileId)}`,
          download: name,
        },
        icon,
        el(
          'span',
          {},
          el('div', { className: 'name', textContent: name }),
          el('div', { className: 'size', textContent: fileSize(message.file.size) }),
        ),
      ),
    );
  }
  if (message.kind === 'voice' && message.file) {
    bubble.append(
      el(
        'div',
        { className: 'voice' },
        el('audio', {
          controls: true,
          preload: 'none',
          src: `/web/api/file/${encodeURIComponent(message.file.fileId)}`,
        }),
        el('span', { className: 'duration', textContent: `🎤 ${clock(message.file.duration)}` }),
      ),
    );
  }
  if (message.html) bubble.append(safeHtml(message.html));
  if (message.reactions?.length)
    // The bot's reactions, as Telegram shows them: a chip under the message (a state: 👀 ✍ 👌).
    bubble.append(
      el('div', {
        className: 'reactions',
        title: 'the bot’s reaction',
        textContent: message.reactions.join(' '),
      }),
    );
  const meta = el('div', { className: 'meta' });
  if (message.history.length > 1) {
    const toggle = el('button', { type: 'button', className: 'edited', textContent: 'edited' });
    toggle.title = `edited ${message.history.length - 1} time(s); click for every version`;
    toggle.onclick = () => {
      const open = bubble.querySelector('.history');
      if (open) open.remove();
      else bubble.append(renderHistory(message));
    };
    meta.append(toggle);
  }
  if (receiver) meta.append(el('span', { className: 'only-you', textContent: '👁 only you ' }));
  if (message.pinned) meta.append('📌 ');
  if (message.silent) meta.append('🔕 ');
  meta.append(
    el('span', { textContent: time(message.date), title: fullTime(message.editedAt ?? message.date) }),
  );
  const reply = el('button', { type: 'button', className: 'reply-link', textContent: '↩' });
  reply.title = 'Reply';
  reply.onclick = () => {
    state.replyTo = message.messageId;
    renderReplyBar();
    $('text').focus();
  };
  meta.append(reply);
  bubble.append(meta);
  node.append(bubble);
  const rows = message.replyMarkup?.inline_keyboard ?? [];
  if (rows.length > 0 && !message.deleted) {
    const keyboard = el('div', { className: 'keyboard' });
    for (const row of rows) {
      const line = el('div', { className: 'row' });
      for (const button of row) {
        const b = el('button', { type: 'button', textContent: button.text });
        // A disabled button (Bot API 10.3) is shown and does nothing.
        if (button.disabled) {
          b.disabled = true;
          b.className = 'disabled';
          b.title = 'This button has done its job';
        } else if (button.url) b.onclick = () => window.open(button.url, '_blank', 'noopener');
        else if (button.callback_data !== undefined) b.onclick = () => press(message, button);
        line.append(b);
      }
      keyboard.append(line);
    }
    node.append(keyboard);
  }
  return node;
}

function renderHistory(message) {
  const box = el('div', { className: 'history' });
  message.history.slice(0, -1).forEach((version, i) => {
    const v = el('div', { className: 'version' });
    v.append(el('strong', { textContent: `v${i + 1} · ${time(version.at)}: ` }), safeHtml(version.html));
    box.append(v);
  });
  return box;
}

function chatTitle(chat) {
  // The private chat is with the bot: show it as the user sees it.
  return chat.type === 'private' ? (state.bot?.first_name ?? chat.title) : chat.title;
}

function renderSidebar() {
  const list = $('chat-list');
  list.replaceChildren();
  for (const [id, e] of state.chats) {
    if (!e.chat) continue;
    const last = [...e.messages.values()].filter((m) => !m.deleted).at(-1);
    const item = el(
      'button',
      { type: 'button', className: `chat-item${id === state.current ? ' active' : ''}` },
      avatar(chatTitle(e.chat), id),
      el('span', {
        className: 'title',
        textContent: `${e.chat.isForum ? '# ' : ''}${chatTitle(e.chat)}`,
      }),
      el('span', { className: 'when', textContent: last ? time(last.date) : '' }),
      el('span', { className: 'snippet', textContent: snippet(last) }),
    );
    item.dataset.chatId = String(id);
    item.onclick = () => {
      state.current = id;
      state.topic = 0;
      state.replyTo = null;
      // On a phone the list covers the chat: picking a chat shows it.
      document.body.classList.remove('chats-open');
      render(true);
    };
    list.append(item);
  }
}

function renderHeader(e) {
  $('banner').hidden = !state.banner;
  $('banner').textContent = state.banner ?? '';
  $('chat-title').textContent = e.chat ? chatTitle(e.chat) : '';
  const face = avatar(e.chat ? chatTitle(e.chat) : '', e.chat?.id ?? 0);
  face.id = 'chat-avatar';
  $('chat-avatar').replaceWith(face);
  const status = $('chat-status');
  if (state.offline === 'restarted') {
    status.className = 'offline';
    status.textContent =
      'the sandbox restarted, and this tab holds the key of its earlier run: open the address it printed this time (it ends in ?k=…). What you typed stays here to copy.';
    return;
  }
  if (state.offline) {
    status.className = 'offline';
    status.textContent =
      'not connected to the sandbox: is it still running? In the Switchyard checkout start it with `npx -y pnpm@12.4.2 start` — retrying…';
    return;
  }
  const action = e.action;
  const typing =
    action && Date.now() - (action.seenAt ?? action.at) < ACTION_MS && (action.threadId ?? 0) === state.topic;
  status.className = typing ? 'typing' : '';
  status.textContent = typing
    ? `${state.bot?.first_name ?? 'bot'} is ${action.action.replaceAll('_', ' ')}…`
    : e.chat?.type === 'private'
      ? `bot · @${state.bot?.username ?? ''}`
      : `${e.chat?.isForum ? 'forum' : 'group'} · the bot ${e.chat?.botCanPin ? 'can' : 'cannot'} pin · it reads only messages that mention @${state.bot?.username ?? ''}, reply to it, or are commands`;
  // In groups the bot answers only when addressed: say how, where the user types.
  $('text').placeholder =
    e.chat?.type === 'private'
      ? 'Message'
      : `Message — mention @${state.bot?.username ?? 'the bot'} or reply to it`;
}

function renderPinnedBar(e) {
  const bar = $('pinned-bar');
  const pinned = e.chat?.pinned ?? [];
  const top = pinned.length > 0 ? e.messages.get(pinned[pinned.length - 1]) : undefined;
  bar.hidden = !top;
  if (!top) return;
  const label = pinned.length > 1 ? `Pinned message #${pinned.length}` : 'Pinned message';
  bar.replaceChildren(
    el('span', { className: 'label', textContent: label }),
    el('span', { className: 'body', textContent: snippet(top).replace(/\s+/g, ' ') }),
  );
  bar.onclick = () => {
    const node = document.querySelector(`.msg[data-id="${top.messageId}"]`);
    if (!node) return;
    node.scrollIntoView({ block: 'center', behavior: 'smooth' });
    node.classList.add('highlight');
    setTimeout(() => node.classList.remove('highlight'), 1200);
  };
}

function renderTopics(e) {
  const tabs = $('topics');
  const all = topicsOf(e);
  tabs.hidden = !all;
  if (!all) return;
  tabs.replaceChildren(
    ...all.map((topic) => {
      const b = el('button', { type: 'button', role: 'tab', className: 'tab', textContent: topic.name });
      b.setAttribute('aria-selected', String(topic.threadId === state.topic));
      b.onclick = () => {
        state.topic = topic.threadId;
        render(true);
      };
      return b;
    }),
  );
  // A private chat's topics are the bot's to open (createForumTopic): only a forum gets "+ Topic".
  if (!e.chat.isForum) return;
  const add = el('button', { type: 'button', className: 'tab add', textContent: '+ Topic' });
  add.onclick = async () => {
    const name = prompt('Topic name');
    if (name) await post('/web/api/topics', { chatId: e.chat.id, name });
  };
  tabs.append(add);
}

function renderReplyBar() {
  const bar = $('reply-bar');
  const e = state.current === null ? undefined : state.chats.get(state.current);
  const target = state.replyTo === null ? undefined : e?.messages.get(state.replyTo);
  bar.hidden = !target;
  if (!target) return;
  const cancel = el('button', { type: 'button', className: 'reply-link', textContent: '✕' });
  cancel.onclick = () => {
    state.replyTo = null;
    renderReplyBar();
  };
  bar.replaceChildren(el('span', { textContent: `Replying to: ${cutChars(snippet(target), 80)}` }), cancel);
}

function render(jump = false) {
  renderSidebar();
  const e = state.current === null ? undefined : state.chats.get(state.current);
  if (!e) return;
  renderHeader(e);
  renderPinnedBar(e);
  renderTopics(e);
  renderReplyBar();
  const box = $('messages');
  const nodes = [...e.messages.values()]
    .filter((m) => !m.deleted && inTopic(m))
    .sort((a, b) => a.messageId - b.messageId)
    .map((m) => messageNode(m, e));
  const draft = e.draft;
  if (draft && Date.now() - (draft.seenAt ?? draft.at) < DRAFT_MS && (draft.threadId ?? 0) === state.topic) {
    const node = el('div', { className: 'msg bot draft' });
    const bubble = el(
      'div',
      { className: 'bubble' },
      el('div', { className: 'sender', textContent: 'draft' }),
    );
    bubble.append(
      draft.html ? safeHtml(draft.html) : el('div', { className: 'text', textContent: 'Thinking…' }),
    );
    if (draft.stopped) bubble.append(el('div', { className: 'stopped', textContent: '■ stopped' }));
    if (draft.canStop && !draft.stopped && draft.stoppedAt === undefined) {
      const stop = el('button', { type: 'button', className: 'draft-stop', textContent: '■ Stop' });
      stop.onclick = () => {
        draft.stopped = true;
        post('/web/api/stop', { chatId: draft.chatId });
        render();
      };
      bubble.append(stop);
    }
    node.append(bubble);
    nodes.push(node);
  }
  // Unchanged messages keep their nodes (and a reader's selection or hover); only a change re-lays out.
  const same = nodes.length === box.children.length && nodes.every((node, i) => box.children[i] === node);
  if (!same) box.replaceChildren(...nodes);
  if (jump) followFromHere();
  followEnd();
}

/** Where the view last put the list's scroll: a scroll above it is the reader's, not the view's. */
let followedTop = 0;

/** Follows the list's end from wherever it is now: a jump, or the user's own message (not their scroll). */
function followFromHere() {
  state.follow = true;
  followedTop = 0;
}

/**
 * Whether the reader has scrolled the list up from where the view put it and away from its end. A shrink
 * below (a draft replaced by a shorter message) also lowers the scroll, but only down to the end.
 */
function readerLeftEnd(box) {
  return box.scrollHeight - box.scrollTop - box.clientHeight >= FOLLOW_PX && box.scrollTop < followedTop;
}

/**
 * Shows the list's end while it follows (see `state.follow`). The reader's scroll is read here too, not
 * only in the `scroll` listener: that event comes with the next frame, and a picture's load or a new
 * message can come before it, which would take the reader back to the end they just left.
 */
function followEnd() {
  const box = $('messages');
  if (readerLeftEnd(box)) state.follow = false;
  if (!state.follow) return;
  box.scrollTop = box.scrollHeight;
  followedTop = box.scrollTop;
}

// --- wiring ---------------------------------------------------------------------------------------

$('composer').addEventListener('submit', send);
// Only the reader's scrolling decides whether the list follows: a scroll up from where the view put it
// stops it, a scroll back to the end starts it again. Growth below (a picture loading, a message growing)
// moves nothing, so it never counts as the reader leaving the end, however late its scroll event comes.
$('messages').addEventListener('scroll', () => {
  const box = $('messages');
  if (readerLeftEnd(box)) state.follow = false;
  else if (box.scrollHeight - box.scrollTop - box.clientHeight < FOLLOW_PX) state.follow = true;
});
// The list's own height changes too (the composer grows with its text, bars come and go).
new ResizeObserver(followEnd).observe($('messages'));
$('text').addEventListener('input', () => {
  const t = $('text');
  t.style.height = 'auto';
  t.style.height = `${Math.min(t.scrollHeight, 160)}px`;
});
$('text').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    $('composer').requestSubmit();
  }
});
$('file').addEventListener('change', () => {
  const file = $('file').files[0];
  $('file-name').hidden = !file;
  $('file-name').textContent = file
    ? `📎 ${file.name} (${fileSize(file.size)}): add a caption, then send`
    : '';
});
$('messages').addEventListener('click', (event) => {
  const spoiler = event.target.closest?.('tg-spoiler');
  if (spoiler) spoiler.classList.toggle('revealed');
});
// On a narrow screen (see style.css) the chat list is a page of its own, opened from the chat's header.
$('show-chats').onclick = () => document.body.classList.add('chats-open');

$('new-group').onclick = async () => {
  const chat = await post('/web/api/chats', { kind: 'group', title: prompt('Group name', 'Sandbox group') });
  if (chat?.id) {
    state.current = chat.id;
    render(true);
  }
};
$('new-forum').onclick = async () => {
  const chat = await post('/web/api/chats', { kind: 'forum', title: prompt('Forum name', 'Sandbox forum') });
  if (chat?.id) {
    state.current = chat.id;
    state.topic = 0;
    render(true);
  }
};

connect();
load();

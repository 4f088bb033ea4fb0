/**
 * The sandbox demo's script: enough behaviour for a newcomer to see every part of Switchyard work with
 * no API key — streamed Markdown, a progress card on slower turns, a permission prompt, a question, a
 * sub-agent, an API error that the CLI retries.
 */

import {
  agent,
  ask,
  bash,
  overloaded,
  reply,
  rule,
  type Script,
  type Step,
  say,
  sendPhoto,
  type TurnContext,
  text,
  thinkThenSay,
  toolUse,
  write,
} from './script.js';

/** Pause between streamed chunks in the demo, slow enough for live editing (and a card) to show. */
const DEMO_DELAY_MS = 120;

/** The demos of the default script: what to say, and what it shows. The help and the sandbox's welcome list these. */
export const SCRIPTED_DEMOS = [
  { say: 'write a file', shows: 'I ask to write a file (a permission prompt)' },
  { say: 'run a command', shows: 'I ask to run a `node` command (a permission prompt)' },
  { say: 'ask me', shows: 'I ask you a question with buttons' },
  { say: 'think', shows: 'I think first (the progress card shows my thought), then answer' },
  { say: 'long answer', shows: 'a slow answer, long enough for the progress card' },
  { say: 'show me a table', shows: 'an answer with a heading, a table and a task list' },
  { say: 'count slowly', shows: "a very slow answer, to try the draft's stop button" },
  { say: 'send me a picture', shows: 'I send a picture with the file tools' },
  { say: 'delegate', shows: 'a sub-agent does some work' },
  { say: 'overloaded', shows: 'the API fails once and the CLI retries' },
] as const satisfies readonly { say: string; shows: string }[];

const HELP = `I am Switchyard's **scripted model**: no real Claude is answering. Try:

${SCRIPTED_DEMOS.map((d) => `- \`${d.say}\` — ${d.shows}`).join('\n')}

Anything else is echoed back.`;

/**
 * A command the CLI asks permission for in every mode (it runs code), unlike `ls`, which it allows by
 * itself.
 */
const DEMO_COMMAND = `node -e "console.log('Hello from Node ' + process.version)"`;

function cwdPath(ctx: TurnContext, name: string): string {
  return `${ctx.cwd ?? '/tmp'}/${name}`;
}

function afterTool(ctx: TurnContext): Step {
  const result = ctx.lastToolResults[0];
  if (result === undefined) return say('Done.', { chunkDelayMs: DEMO_DELAY_MS });
  if (result.isError)
    return say(`That did not happen:\n\n> ${firstLine(result.text)}`, { chunkDelayMs: DEMO_DELAY_MS });
  return say(`Done. The tool said:\n\n\`\`\`\n${result.text.slice(0, 500)}\n\`\`\``, {
    chunkDelayMs: DEMO_DELAY_MS,
  });
}

function firstLine(s: string): string {
  return s.split('\n')[0]?.slice(0, 200) ?? '';
}

const TABLE = `## Trains today

| train | from | to | on time |
|:--|:--|:--|:-:|
| IC 101 | Basel | Zurich | yes |
| RE 7 | Bern | Thun | no |
| S 3 | Zug | Baar | yes |

- [x] timetable loaded
- [ ] delays explained`;

const COUNT = Array.from({ length: 100 }, (_, i) => `${i + 1}`).join(', ');

const LONG = Array.from(
  { length: 8 },
  (_, i) => `${i + 1}. Step ${i + 1} of a long answer, streamed slowly so that the progress card appears.`,
).join('\n');

/** The script the sandbox runs when no real Claude is available. */
export function defaultScript(): Script {
  const slow = { chunkDelayMs: DEMO_DELAY_MS };
  return {
    rules: [
      rule((ctx) => /^\/?help\b/i.test(typedText(ctx.userText)), say(HELP, slow)),
      rule(
        /write a file/i,
        (ctx) =>
          write(cwdPath(ctx, 'hello-from-switchyard.md'), '# Hello\n\nWritten by the scripted model.\n'),
        afterTool,
      ),
      rule(/run a command|\bbash\b/i, bash(DEMO_COMMAND, 'Print the Node version'), afterTool),
      rule(
        /ask me/i,
        ask({
          question: 'Which colour should the sandbox use?',
          header: 'Colour',
          options: [
            { label: 'Blue', description: 'Calm and classic' },
            { label: 'Green', description: 'Like a railway signal' },
          ],
        }),
        (ctx) => say(answeredText(ctx.lastToolResults[0]?.text), slow),
      ),
      // Slow enough for the progress card (the sandbox shows it after 3 s), which shows the thought
      // while the answer streams: the CLI reports a thought once it is complete, before the answer.
      rule(
        /\bthink\b/i,
        thinkThenSay(
          'The user wants to see me think. I will weigh two ways to answer, pick the shorter one, and say so.',
          'I thought first: the progress card shows my thought while this answer streams. A real model ' +
            'thinks before its answers too, and the card shows what it thought, one line at a time.',
          { chunkDelayMs: 200, chunkSize: 8 },
        ),
      ),
      rule(
        /send (me )?a (picture|photo)/i,
        sendPhoto('switchyard.png', 'A picture from the **agent**'),
        say('There it is.', slow),
      ),
      rule(/show me a table/i, say(TABLE, slow)),
      rule(/count slowly/i, say(`Counting: ${COUNT}.`, { chunkDelayMs: 200, chunkSize: 4 })),
      rule(/long answer/i, say(`Here is a long answer:\n\n${LONG}`, { chunkDelayMs: 250, chunkSize: 12 })),
      rule(
        /delegate/i,
        agent({ description: 'List the files', prompt: 'SUBAGENT: list the files in the working directory' }),
        say('The sub-agent is working in the background.', slow),
      ),
      {
        match: 'SUBAGENT: list the files',
        kinds: ['subagent'],
        steps: [
          reply([text('Listing.'), toolUse('Bash', { command: 'ls', description: 'List files' })]),
          afterTool,
        ],
      },
      rule('<task-notification>', (ctx) =>
        say(
          `The sub-agent finished:\n\n${/<result>([\s\S]*?)<\/result>/.exec(ctx.userText)?.[1] ?? '(no result)'}`,
          slow,
        ),
      ),
      rule(
        /overloaded/i,
        overloaded(),
        say('The API was overloaded once; this answer came on the retry.', slow),
      ),
    ],
    fallback: (ctx) => [say(`${echoText(ctx.userText)}\n\n_(Say \`help\` to see what I can do.)_`, slow)],
  };
}

/**
 * The answer to `ask me`, from the CLI's tool result (`User has answered your questions: "Q"="A". You
 * can now continue …`, measured with 2.1.328): the choice in words, never the CLI's sentence to the model.
 */
function answeredText(result: string | undefined): string {
  const pairs = [...(result ?? '').matchAll(/"((?:[^"\\]|\\.)*)"="((?:[^"\\]|\\.)*)"/g)];
  if (pairs.length === 0)
    return result ? 'You answered, but I could not read your choice.' : 'You did not answer.';
  return pairs.map(([, question, answer]) => `You answered **${answer}** to “${question}”`).join('\n');
}

/** A bridge's line naming a file the user sent: `[file: <path> (<name>, <mime>, <n> bytes)]`. */
const FILE_LINE = /^\[file: [^\]]*?\(([^,)]+)[^\]]*\)\]$/;
/** The CLI's line naming its own copy of a picture: `[Image: source: /tmp/claude-…/images/1.png]`. */
const IMAGE_LINE = /^\[Image( #\d+)?: source: [^\]]*\]$/;

/**
 * The echo of what the person sent: their words quoted, and what came with them by name ("a picture",
 * "report.pdf"), never a path of the bridge's or of the CLI's temporary directory, never an empty quote.
 */
function echoText(userText: string): string {
  const lines = userText.split('\n').map((line) => line.trim());
  const sent = [
    ...lines.filter((line) => IMAGE_LINE.test(line)).map(() => 'a picture'),
    ...lines.flatMap((line) => {
      const name = FILE_LINE.exec(line)?.[1];
      return name === undefined ? [] : [name];
    }),
  ];
  const typed = typedText(userText);
  const quoted = typed === '' ? '' : `\n\n> ${typed.replace(/\n/g, '\n> ')}`;
  if (sent.length === 0) return `You said:${quoted || '\n\n(nothing)'}`;
  const what = sent.length === 1 ? sent[0] : `${sent.slice(0, -1).join(', ')} and ${sent.at(-1)}`;
  return typed === '' ? `You sent ${what}.` : `You sent ${what}, saying:${quoted}`;
}

/**
 * What the person typed: the bridge puts a `[telegram …]` context header (and `[file: …]` lines) before
 * it, and the CLI an `[Image: source: …]` line after it, which an echo should not repeat back.
 */
function typedText(userText: string): string {
  return userText
    .split('\n')
    .filter((line) => !/^\[(telegram|file|photo|document)\b[^\]]*\]$/.test(line.trim()))
    .filter((line) => !IMAGE_LINE.test(line.trim()))
    .join('\n')
    .trim();
}

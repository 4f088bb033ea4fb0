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

const HELP = `I am Switchyard's **scripted model**: no real Claude is answering. Try:

- \`write a file\` — I ask to write a file (a permission prompt)
- \`run a command\` — I ask to run \`ls\`
- \`ask me\` — I ask you a question with buttons
- \`think\` — I think first, then answer
- \`long answer\` — a slow answer, long enough for the progress card
- \`show me a table\` — an answer with a heading, a table and a task list
- \`count slowly\` — a very slow answer, to try the draft's stop button
- \`delegate\` — a sub-agent does some work
- \`overloaded\` — the API fails once and the CLI retries

Anything else is echoed back.`;

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
      rule(/^\/?help\b/i, say(HELP, slow)),
      rule(
        /write a file/i,
        (ctx) =>
          write(cwdPath(ctx, 'hello-from-switchyard.md'), '# Hello\n\nWritten by the scripted model.\n'),
        afterTool,
      ),
      rule(/run a command|\bbash\b/i, bash('ls -la', 'List the files here'), afterTool),
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
        (ctx) => say(`You answered: ${ctx.lastToolResults[0]?.text ?? '(nothing)'}`, slow),
      ),
      rule(
        /\bthink\b/i,
        thinkThenSay('The user wants to see thinking. I will think briefly.', 'I thought about it.', slow),
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
    fallback: (ctx) => [
      say(
        `You said:\n\n> ${typedText(ctx.userText).replace(/\n/g, '\n> ')}\n\n_(Say \`help\` to see what I can do.)_`,
        slow,
      ),
    ],
  };
}

/**
 * What the person typed: the bridge puts a `[telegram …]` context header (and `[file: …]` lines) before
 * it, which an echo should not repeat back.
 */
function typedText(userText: string): string {
  return userText
    .split('\n')
    .filter((line) => !/^\[(telegram|file|photo|document)\b[^\]]*\]$/.test(line.trim()))
    .join('\n')
    .trim();
}

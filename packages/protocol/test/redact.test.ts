import { describe, expect, it } from 'vitest';
import { describeError } from '../src/common/logger.js';
import { describeStderr, redactSecrets } from '../src/common/redact.js';

const BOT_TOKEN = '1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawq';

describe('redaction', () => {
  it('replaces bot tokens and Anthropic keys, and leaves other text alone', () => {
    expect(redactSecrets(`GET /bot${BOT_TOKEN}/getUpdates`)).toBe('GET /bot[redacted]/getUpdates');
    expect(redactSecrets('x-api-key: sk-ant-oat01-Zz_9-aa end')).toBe('x-api-key: [redacted] end');
    expect(redactSecrets('chat 12345678: ok, port 8080:abc')).toBe('chat 12345678: ok, port 8080:abc');
  });

  it('redacts error texts before they are logged', () => {
    expect(describeError(new Error(`bad token ${BOT_TOKEN}`))).toBe('bad token [redacted]');
    expect(describeError(`sk-ant-api03-secret`)).toBe('[redacted]');
  });

  it('describes a stderr tail by its shape, never its text', () => {
    const described = describeStderr('the user wrote: my password is hunter2\nError: boom\n');
    expect(described).toEqual({ stderrLines: 2, stderrChars: 51, stderrLastLine: 'error' });
    expect(JSON.stringify(described)).not.toContain('hunter2');
    expect(describeStderr('').stderrLastLine).toBe('empty');
    expect(describeStderr('    at main (file.js:1:1)').stderrLastLine).toBe('stack_frame');
    expect(describeStderr('Invalid API key · Please run /login').stderrLastLine).toBe('auth');
  });
});

/** The signature check of a webhook body: the HMAC-SHA256 under the hook's secret, as GitHub documents it. */
import { describe, expect, it } from 'vitest';
import { checkSignature, signBody } from '../src/io/automation/signature.js';

// GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!".
const SECRET = "It's a Secret to Everybody";
const BODY = Buffer.from('Hello, World!');
const GITHUB_EXAMPLE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

describe('webhook signature check', () => {
  it('computes what GitHub computes', () => {
    expect(signBody(SECRET, BODY)).toBe(GITHUB_EXAMPLE);
  });

  it.each([
    ['the right digest', GITHUB_EXAMPLE, 'valid'],
    ['the right digest in capitals', GITHUB_EXAMPLE.toUpperCase().replace('SHA256=', 'sha256='), 'valid'],
    ['one digit off', GITHUB_EXAMPLE.replace(/7$/, '8'), 'mismatch'],
    ['the digest of another body', signBody(SECRET, 'Hello, World?'), 'mismatch'],
    ['another secret', signBody('guess', BODY), 'mismatch'],
    ['no header', undefined, 'missing'],
    ['a SHA-1 header', 'sha1=0a4d55a8d778e5022fab701977c5d840bbc486d0', 'malformed'],
    ['a short digest', 'sha256=757107ea', 'malformed'],
  ])('%s: %s', (_what, header, expected) => {
    expect(checkSignature(header, SECRET, BODY)).toBe(expected);
  });
});

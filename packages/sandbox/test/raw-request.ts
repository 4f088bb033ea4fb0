/**
 * One HTTP request to the sandbox on 127.0.0.1 with exactly the headers given: fetch would not let a test
 * set Host or Origin, which the sandbox's access checks read.
 */
import { request } from 'node:http';

/** What came back: the status, the body as text, the headers. */
export interface RawResponse {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

/** Sends `method path` to the sandbox on `port` with `headers` (and `body`); resolves with the response. */
export function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = 'GET',
  body = '',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

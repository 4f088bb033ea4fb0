#!/usr/bin/env node
/**
 * The MCP server's program: `node <dist>/mcp/main.js --socket <session state dir>/tools.sock`, started
 * by `claude` over stdio from the config the bridge writes. Logs nothing on stdout (that is the MCP
 * channel); a bad command line is reported on stderr, which the CLI keeps.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer } from './server.js';
import { createToolClient } from './tool-client.js';

const at = process.argv.indexOf('--socket');
const socketPath = at >= 0 ? process.argv[at + 1] : undefined;
if (!socketPath) {
  process.stderr.write('usage: main.js --socket <path of the bridge tool socket>\n');
  process.exit(2);
}
const server = createMcpServer(createToolClient({ socketPath }), '0.1.0');
await server.connect(new StdioServerTransport());

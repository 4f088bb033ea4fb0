// The ingress bench's floor peer: a Node process that does nothing but what the design's two extra
// hops do — long-polls an HTTP "Telegram" with grammY's own client (as the gateway polls), and on each
// answer writes one byte to a Unix socket (as the gateway writes the frame that wakes the bridge).
//   node floor-peer.mjs <apiRoot> <socket path>
import { connect } from 'node:net';
import { Api } from '../../gateway/node_modules/grammy/out/mod.js';

const [apiRoot, socketPath] = process.argv.slice(2);
const api = new Api('4243:floor-peer-token-000000000000000000', { apiRoot });
const socket = connect(socketPath);
await new Promise((resolve) => socket.once('connect', resolve));
let offset = 0;
for (;;) {
  const updates = await api.getUpdates({ offset, timeout: 30 });
  for (const update of updates) offset = update.update_id + 1;
  if (updates.length > 0) socket.write('x');
}

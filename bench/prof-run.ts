// scratch: not committed
import { bodyFactory } from './lib/bodies.js';
import { load } from './lib/load.js';
const url = process.argv[2]!;
const r = await load({ url, body: bodyFactory('json'), seconds: Number(process.argv[3] ?? 10), warmupSeconds: 2, connections: Number(process.env.CONN ?? 50) });
console.log(JSON.stringify({ rps: r.rps, ok: r.ok, non2xx: r.non2xx }));

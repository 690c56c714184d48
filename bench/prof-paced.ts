// scratch: not committed
import { bodyFactory } from './lib/bodies.js';
import { pacedLoad } from './lib/paced.js';
const r = await pacedLoad({ url: process.argv[2]!, body: bodyFactory('json'), seconds: 10, warmupSeconds: 2, rate: Number(process.env.RATE), connections: 50 });
console.log(JSON.stringify({ ok: r.ok, p99: r.p99 }));

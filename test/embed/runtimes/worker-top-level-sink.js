// A Worker whose HTTP sink and Hono app are made at the module's top level, as Hono apps are
// usually written: workerd refuses random values there, so the sink must not draw any until it sends.
import { Hono } from 'hono';
import { createHttpSink } from '../../../dist/index.js';
import { agentwarden } from '../../../dist/hono.js';

const app = new Hono().use(agentwarden({ sink: createHttpSink({ url: 'http://127.0.0.1:9', token: 'top-level' }) }));
app.get('*', (c) => c.text(`ok ${c.get('agentwarden').result}\n`));
export default app;

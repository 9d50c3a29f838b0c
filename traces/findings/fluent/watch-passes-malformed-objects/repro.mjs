// Reproducer: kubernetes-fluent-client 3.11.11 -- the Watcher hands malformed
// objects to the application's callback and caches them.
//
// Run (from the directory whose node_modules holds the library, Node >= 22.19):
//   cd subjects/node/js && ./node_modules/.bin/node ../../../traces/findings/fluent/watch-passes-malformed-objects/repro.mjs
//
// K8s(kind.ConfigMap).Watch(cb) types cb as taking the watched model's
// instance: WatchAction<T, K = InstanceType<T>> (dist/fluent/shared-types.d.ts:21).
// But Watcher.#processLine / #process (dist/fluent/watch.js:309-325) call cb
// with every ADDED/MODIFIED/DELETED event's object and then cache it under
// metadata.uid, with no look at its kind or its resourceVersion: a ConfigMap
// whose resourceVersion is "" or "not-a-number", and a Secret in a ConfigMap
// watch, all reach the callback and the cache.
//
// Minimal API sequence, against a local HTTP server on 127.0.0.1 (a
// kubeconfig file naming it, no credentials, in KUBECONFIG: the library reads
// its cluster with KubeConfig.loadFromDefault()):
//   watcher = K8s(kind.ConfigMap).InNamespace('default').Watch(cb); await watcher.start()
//   LIST  -> ConfigMapList, resourceVersion "1", one ConfigMap default/o1
//   WATCH -> ADDED    ConfigMap default/o2, resourceVersion ""
//            MODIFIED ConfigMap default/o3, resourceVersion "not-a-number"
//            ADDED    Secret    default/s1, resourceVersion "2"
// Prints one line: "DEFECT: ..." and exits 1 when any of the three reaches the
// callback; "OK: ..." and exits 0 when none does.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PKG = 'kubernetes-fluent-client';
const SETTLE_MS = 1000; // after the watch events are sent
const BOUND_MS = 8000;

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.log(`ERROR: node ${process.version}: ${PKG} 3.x needs Node >= 22.19 (use ./node_modules/.bin/node from subjects/node/js)`);
  process.exit(2);
}

const require = createRequire(join(process.cwd(), 'noop.js'));
const { K8s, kind, WatchEvent } = await import(pathToFileURL(require.resolve(PKG)).href);

const meta = (name, uid, resourceVersion) => ({ name, namespace: 'default', uid, resourceVersion });
const listed = { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('o1', 'u1', '1'), data: { k: 'v' } };
const events = [
  { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('o2', 'u2', ''), data: {} } },
  { type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('o3', 'u3', 'not-a-number'), data: {} } },
  { type: 'ADDED', object: { apiVersion: 'v1', kind: 'Secret', metadata: meta('s1', 'u4', '2'), data: {} } },
];
const describe = (o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}@${JSON.stringify(o.metadata.resourceVersion)}`;

let watchSent = false;
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname !== '/api/v1/namespaces/default/configmaps') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
    return;
  }
  if (url.searchParams.get('watch') !== 'true') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [listed] }));
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  // Send the malformed events once; a later watch (a reconnect) stays silent.
  if (!watchSent) {
    watchSent = true;
    for (const e of events) res.write(JSON.stringify(e) + '\n');
    setTimeout(verdict, SETTLE_MS);
  }
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));

const dir = mkdtempSync(join(tmpdir(), 'repro-fluent-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'kubeconfig'),
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${server.address().port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'u', user: {} }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
    'current-context': 'x',
  }),
);
process.env.KUBECONFIG = join(dir, 'kubeconfig');

const called = []; // [phase, object] per callback call
const cached = new Set(); // objects the Watcher cached (WatchEvent.DATA follows #cache.set)
const errors = [];
const watcher = K8s(kind.ConfigMap)
  .InNamespace('default')
  .Watch((obj, phase) => {
    called.push([phase, obj]);
  });
watcher.events.on(WatchEvent.DATA, (obj) => cached.add(obj));
for (const name of ['LIST_ERROR', 'WATCH_ERROR', 'NETWORK_ERROR', 'DATA_ERROR']) {
  watcher.events.on(WatchEvent[name], (err) => errors.push(`${WatchEvent[name]}: ${err && err.message ? err.message : err}`));
}

const bound = setTimeout(() => {
  console.log(`ERROR: no watch request within ${BOUND_MS} ms${errors.length ? ` (${errors[0]})` : ''}`);
  finish(2);
}, BOUND_MS);

await watcher.start().catch((err) => {
  console.log(`ERROR: watcher.start() rejected: ${err && err.message ? err.message : err}`);
  finish(2);
});

function verdict() {
  clearTimeout(bound);
  const bad = new Set(events.map((e) => e.object.metadata.uid));
  const reached = called.filter(([, o]) => o && o.metadata && bad.has(o.metadata.uid));
  if (reached.length > 0) {
    const inCache = reached.filter(([, o]) => cached.has(o)).length;
    console.log(
      `DEFECT: the ConfigMap watch callback got ${reached.length} malformed object(s): ` +
        reached.map(([p, o]) => `${p} ${describe(o)}`).join(', ') +
        `; ${inCache} of them cached by metadata.uid`,
    );
    finish(1);
    return;
  }
  console.log(
    `OK: the callback got none of the malformed objects (${called.length} call(s): ${called.map(([p, o]) => `${p} ${describe(o)}`).join(', ')})` +
      (errors.length ? `; reported: ${errors.join('; ')}` : ''),
  );
  finish(0);
}

function finish(code) {
  watcher.close();
  server.closeAllConnections();
  server.close();
  process.exit(code);
}

// Reproducer: kubernetes-fluent-client 3.11.11 -- on a relist, an object that
// was deleted and created again under the same name while the watch was down
// reaches the callback as ADDED (the new object) before DELETED (the old one).
//
// Run (from the directory whose node_modules holds the library, Node >= 22.19):
//   cd subjects/node/js && ./node_modules/.bin/node ../../../traces/findings/fluent/relist-adds-new-uid-before-deleting-old/repro.mjs
//
// Watcher.#list (dist/fluent/watch.js:231-291) walks the list's items first,
// calling the callback with ADDED for every uid it has not cached, and only
// after the last page calls it with DELETED for every cached uid the list did
// not hold. A ConfigMap deleted and created again between two lists has a new
// uid: the callback is told ADDED default/o1 (new) and then DELETED default/o1
// (old), the reverse of the server's order. An application that keys its
// state by namespace/name -- how Kubernetes addresses objects, and how the
// callback's (update, phase) signature invites it to -- ends with default/o1
// deleted while the server holds it, until the next event for that object.
//
// Minimal API sequence, against a local HTTP server on 127.0.0.1 (a
// kubeconfig file naming it, no credentials, in KUBECONFIG):
//   watcher = K8s(kind.ConfigMap).InNamespace('default').Watch(cb); await watcher.start()
//   LIST  -> ConfigMapList rv "1": default/o1 uid u1 rv "1"
//   WATCH -> (the stream ends at once: the Watcher reconnects, listing first)
//   LIST  -> ConfigMapList rv "3": default/o1 uid u2 rv "3" (deleted at 2, created at 3)
//   WATCH -> (stays open, silent)
// Prints one line: "DEFECT: ..." and exits 1 when the callback's last word on
// default/o1 is DELETED; "OK: ..." and exits 0 when it is the new object.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PKG = 'kubernetes-fluent-client';
const SETTLE_MS = 1000; // after the second list is served
const BOUND_MS = 8000;

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.log(`ERROR: node ${process.version}: ${PKG} 3.x needs Node >= 22.19 (use ./node_modules/.bin/node from subjects/node/js)`);
  process.exit(2);
}

const require = createRequire(join(process.cwd(), 'noop.js'));
const { K8s, kind, WatchEvent } = await import(pathToFileURL(require.resolve(PKG)).href);

const configMap = (uid, resourceVersion) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'o1', namespace: 'default', uid, resourceVersion },
  data: { k: resourceVersion },
});
const lists = [
  { rv: '1', items: [configMap('u1', '1')] },
  { rv: '3', items: [configMap('u2', '3')] },
];
const describe = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion} (uid ${o.metadata.uid})`;

let listsServed = 0;
let watchesServed = 0;
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname !== '/api/v1/namespaces/default/configmaps') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
    return;
  }
  if (url.searchParams.get('watch') !== 'true') {
    const l = lists[Math.min(listsServed++, lists.length - 1)];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: l.rv }, items: l.items }));
    if (listsServed === 2) setTimeout(verdict, SETTLE_MS);
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  // The first watch ends at once (a server restart, a load balancer's idle
  // cut); later ones stay open and silent.
  if (watchesServed++ === 0) res.end();
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
const byName = new Map(); // the application's state, keyed by namespace/name
const errors = [];
const watcher = K8s(kind.ConfigMap)
  .InNamespace('default')
  .Watch((obj, phase) => {
    called.push([phase, obj]);
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (phase === 'DELETED') byName.delete(key);
    else byName.set(key, obj);
  });
for (const name of ['LIST_ERROR', 'WATCH_ERROR', 'NETWORK_ERROR', 'DATA_ERROR']) {
  watcher.events.on(WatchEvent[name], (err) => errors.push(`${WatchEvent[name]}: ${err && err.message ? err.message : err}`));
}

const bound = setTimeout(() => {
  console.log(`ERROR: the Watcher did not list twice within ${BOUND_MS} ms${errors.length ? ` (${errors[0]})` : ''}`);
  finish(2);
}, BOUND_MS);

await watcher.start().catch((err) => {
  console.log(`ERROR: watcher.start() rejected: ${err && err.message ? err.message : err}`);
  finish(2);
});

function verdict() {
  clearTimeout(bound);
  const calls = called.map(([p, o]) => `${p} ${describe(o)}`).join(', ');
  const held = byName.get('default/o1');
  if (!held) {
    console.log(
      `DEFECT: after the relist the callback was told ${calls}: keyed by namespace/name, the application holds no default/o1 while the server holds it at 3`,
    );
    finish(1);
    return;
  }
  console.log(`OK: the application holds ${describe(held)} (${called.length} call(s): ${calls})`);
  finish(0);
}

function finish(code) {
  watcher.close();
  server.closeAllConnections();
  server.close();
  process.exit(code);
}

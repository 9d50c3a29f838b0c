// Reproducer: kubernetes-fluent-client 3.11.11 -- after its first list fails,
// the Watcher watches from no version and completes no list until its relist
// timer (600 s): the application is never told its initial list is done.
//
// Run (from the directory whose node_modules holds the library, Node >= 22.19):
//   cd subjects/node/js && ./node_modules/.bin/node ../../../traces/findings/fluent/failed-first-list-never-completes/repro.mjs
//
// Watcher.#watch (dist/fluent/watch.js:360-376) lists first; when the list
// fails (an HTTP error, or a refused connection: #list emits LIST_ERROR and
// returns false, watch.js:205-219,294-296) it sets #lastSeenTime = OVERRIDE,
// "trigger a faster resync so items aren't permanently missed"
// (watch.js:370-373), and goes on to watch from #resourceVersion, still
// undefined: a watch from no version (watch.js:173-175,376). The server
// answers it with an ADDED event for every object it holds; the first of them
// sets #lastSeenTime = Date.now() (#processLine, watch.js:333) before the 5 s
// resync check (watch.js:111,454-486) has looked, so the check finds a fresh,
// healthy stream and never relists. The only list left is the relist timer's,
// relistIntervalSec (600 s) later (watch.js:90,100-109). Until then no list
// completes: no WatchEvent.LIST ("Resource list operation run",
// dist/fluent/watch.d.ts:23-24), and start() has already resolved after the
// LIST_ERROR (watch.js:125-129). An application that waits for its initial
// list (LIST) before acting -- as the adapters of kverify do, and as every
// informer's "synced" means -- waits ten minutes; one that does not cannot
// tell the objects it got from a complete view. A refused first list takes
// the same path (#list's catch, watch.js:294-296). 2.6.5 does the same with
// no faster resync at all (its #watch ignores the failed list, 2.6.5
// dist/fluent/watch.js:274-279; kverify's trace:
// traces/findings/fluent@2.6.5/wire-wire_schedules-fluent_2.6.5.json); this
// file does not run 2.x, which speaks only TLS (an https.Agent whatever the
// URL's scheme).
//
// Minimal API sequence, against a local HTTP server on 127.0.0.1 (a
// kubeconfig file naming it, no credentials, in KUBECONFIG):
//   watcher = K8s(kind.ConfigMap).InNamespace('default').Watch(cb)   (default WatchCfg)
//   watcher.events.on(WatchEvent.LIST, ...); await watcher.start()
//   LIST              -> 500 Status InternalError (every later LIST -> 200 ConfigMapList rv "2")
//   WATCH (no rv)     -> ADDED default/o1@1, ADDED default/o2@2, then open and silent
//   (wait until 7 s after the Watcher was made: its first resync check, due at
//    5 s + up to 1 s of jitter, has run)
// Prints one line: "DEFECT: ..." and exits 1 when no list completed (no LIST
// event) by then; "OK: ..." and exits 0 when one did.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PKG = 'kubernetes-fluent-client';
const VERDICT_MS = 7000; // after the Watcher is made: past its first resync check (5 s + jitter < 1 s)

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.log(`ERROR: node ${process.version}: ${PKG} 3.x needs Node >= 22.19 (use ./node_modules/.bin/node from subjects/node/js)`);
  process.exit(2);
}

const require = createRequire(join(process.cwd(), 'noop.js'));
const { K8s, kind, WatchEvent } = await import(pathToFileURL(require.resolve(PKG)).href);
const version = require(join(PKG, 'package.json')).version;

const configMap = (name, uid, resourceVersion) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default', uid, resourceVersion },
  data: { k: resourceVersion },
});
const held = [configMap('o1', 'u1', '1'), configMap('o2', 'u2', '2')];
const describe = (o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`;

const requests = []; // what the server answered, in order
let listsServed = 0;
const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname !== '/api/v1/namespaces/default/configmaps') {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
    return;
  }
  const rv = url.searchParams.get('resourceVersion') || '';
  if (url.searchParams.get('watch') !== 'true') {
    if (listsServed++ === 0) {
      // The first list fails: an apiserver restarting, overloaded, or behind
      // a load balancer with no healthy backend answers so.
      requests.push('LIST -> 500');
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server is restarting', reason: 'InternalError', code: 500 }));
      return;
    }
    requests.push('LIST -> 200');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '2' }, items: held }));
    return;
  }
  requests.push(`WATCH rv=${JSON.stringify(rv)} -> 200`);
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  // A watch from no version starts with an ADDED event for every object the
  // server holds (the Kubernetes API's "synthetic" initial events); a watch
  // from a version gets the changes after it: none here. Both stay open.
  if (rv === '') for (const o of held) res.write(JSON.stringify({ type: 'ADDED', object: o }) + '\n');
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

const seen = []; // the Watcher's story, in order: list_error, list, start() resolved, callback calls
const called = [];
let lists = 0;
const t0 = Date.now();
const watcher = K8s(kind.ConfigMap)
  .InNamespace('default')
  .Watch((obj, phase) => {
    called.push(`${phase} ${describe(obj)}`);
    seen.push(`callback ${phase} ${describe(obj)}`);
  });
watcher.events.on(WatchEvent.LIST, () => {
  lists++;
  seen.push('LIST');
});
watcher.events.on(WatchEvent.LIST_ERROR, (err) => seen.push(`LIST_ERROR (${err && err.message ? err.message.split(' [')[0] : err})`));
for (const name of ['WATCH_ERROR', 'NETWORK_ERROR', 'DATA_ERROR', 'RECONNECT']) {
  watcher.events.on(WatchEvent[name], () => seen.push(WatchEvent[name]));
}

setTimeout(verdict, VERDICT_MS - (Date.now() - t0));

await watcher.start().then(
  () => seen.push('start() resolved'),
  (err) => {
    console.log(`ERROR: watcher.start() rejected: ${err && err.message ? err.message : err}`);
    finish(2);
  },
);

function verdict() {
  const story = `${requests.join(', ')}; the Watcher: ${seen.join(', ')}`;
  if (lists > 0) {
    console.log(`OK: ${PKG}@${version} completed a list within ${VERDICT_MS / 1000} s of a failed first list (${story})`);
    finish(0);
    return;
  }
  if (!requests.some((r) => r.startsWith('WATCH'))) {
    console.log(`ERROR: ${PKG}@${version} made no watch request within ${VERDICT_MS / 1000} s (${story})`);
    finish(2);
    return;
  }
  console.log(
    `DEFECT: ${PKG}@${version}: ${VERDICT_MS / 1000} s after its first list failed no list has completed (no WatchEvent.LIST), ` +
      `past its 5 s resync check: ${story}; the server's ADDED events kept the stream fresh, and the next list is the relist timer's, 600 s after start`,
  );
  finish(1);
}

function finish(code) {
  watcher.close();
  server.closeAllConnections();
  server.close();
  process.exit(code);
}

// Reproducer: @kubernetes/client-node 2.0.1 -- a watch event whose object is
// null crashes the whole process.
//
// Run (from the directory whose node_modules holds the library, Node >= 22):
//   cd subjects/node/js && ./node_modules/.bin/node ../../../traces/findings/client-node/informer-null-object-crashes/repro.mjs
//
// The informer's documented error channel is informer.on('error')
// (dist/informer.d.ts:22), and the watch's line handler wraps the event
// callback in a try/catch to "ignore parse errors" (dist/watch.js:81-88). But
// ListWatch.watchHandler is async (dist/cache.js:160) and reads obj.metadata
// (addOrUpdateObject, dist/cache.js:231); the line handler calls it without
// awaiting it, so the TypeError on {"type":"ADDED","object":null} becomes an
// unhandled rejection and Node exits with status 1.
//
// Minimal API sequence, against a local HTTP server on 127.0.0.1:
//   kc.loadFromOptions({ clusters: [{ server: 'http://127.0.0.1:<port>', skipTLSVerify: true }], users: [{ name: 'u' }], ... })
//   informer = makeInformer(kc, '/api/v1/namespaces/default/configmaps', () => api.listNamespacedConfigMap({ namespace: 'default' }))
//   informer.on('error', ...); await informer.start()
//   LIST  -> ConfigMapList, resourceVersion "1", one ConfigMap default/o1
//   WATCH -> {"type":"ADDED","object":null}
// The same path takes an exception thrown inside the application's own
// handler: informer.on('add', cb) is called from the same unawaited async
// watchHandler (addOrUpdateObject -> the 'add' callbacks), so a handler that
// throws on an object the watch delivers ends the process the same way.
// Second case: WATCH -> {"type":"ADDED","object":<ConfigMap default/o2>}, and
// the 'add' handler throws for o2.
//
// Each case runs the informer in a child process (this file with the
// arguments "child" and the case) so that the parent can see the child's
// exit status. Prints one line: "DEFECT: ..." and exits 1 when a child dies
// with status 1 (naming the cases that did), "OK: ..." and exits 0 when the
// informer survives both.

import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const PKG = '@kubernetes/client-node';
const SURVIVE_MS = 1500; // the child reports OK after surviving the event this long
const CHILD_BOUND_MS = 6000; // the child gives up if no watch request came by then
const PARENT_BOUND_MS = 8000;

if (Number(process.versions.node.split('.')[0]) < 22) {
  console.log(`ERROR: node ${process.version}: ${PKG} 2.x needs Node >= 22 (use ./node_modules/.bin/node from subjects/node/js)`);
  process.exit(2);
}
const CASES = {
  null: '{"type":"ADDED","object":null}',
  throw: "an 'add' handler that throws on the watch's {\"type\":\"ADDED\",\"object\":<ConfigMap default/o2>}",
};
if (process.argv[2] === 'child') {
  await child(process.argv[3]);
} else {
  const results = [];
  for (const c of Object.keys(CASES)) results.push(await runCase(c));
  const crashed = results.filter((r) => r.defect);
  const broken = results.find((r) => r.error);
  if (broken) {
    console.log(`ERROR: ${broken.error}`);
    process.exit(2);
  }
  if (crashed.length) {
    console.log(`DEFECT: the process running the informer exited with status 1 after ${crashed.map((r) => r.line).join('; and after ')}`);
    process.exit(1);
  }
  console.log(`OK: ${results.map((r) => r.line).join('; ')}`);
  process.exit(0);
}

// runCase runs one case in a child and says what became of it.
function runCase(which) {
  return new Promise((resolve) => {
    const c = fork(process.argv[1], ['child', which], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    let verdict;
    c.stderr.on('data', (d) => (stderr += d));
    c.on('message', (m) => (verdict = m));
    const bound = setTimeout(() => {
      c.kill('SIGKILL');
      resolve({ error: `${which}: the child neither crashed nor reported within ${PARENT_BOUND_MS} ms` });
    }, PARENT_BOUND_MS);
    c.on('exit', (code, signal) => {
      clearTimeout(bound);
      if (verdict && verdict.ok && code === 0) {
        resolve({ line: verdict.ok });
        return;
      }
      if (code === 1 && verdict && verdict.sent) {
        const err = (stderr.match(/\b(TypeError|Error): [^\n]*/) || ['no error on stderr'])[0];
        const at = (stderr.match(/\n\s+at ([^\n]*)/) || [, '?'])[1].replace(/\(\S*node_modules\//, '(');
        resolve({
          defect: true,
          line:
            `${CASES[which]} (${stderr.includes('informer error:') ? "after an 'error' event" : "no 'error' event"}): unhandled rejection ${err} at ${at}`,
        });
        return;
      }
      resolve({ error: `${which}: child exited with code ${code} signal ${signal} before the event was sent (${JSON.stringify(verdict)}): ${stderr.trim().split('\n').slice(-3).join(' | ')}` });
    });
  });
}

async function child(which) {
  const require = createRequire(join(process.cwd(), 'noop.js'));
  const k8s = await import(pathToFileURL(require.resolve(PKG)).href);

  const cm = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'o1', namespace: 'default', uid: 'u1', resourceVersion: '1' },
    data: { k: 'v' },
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname !== '/api/v1/namespaces/default/configmaps') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }));
      return;
    }
    if (url.searchParams.get('watch') !== 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items: [cm] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const object = which === 'throw' ? { ...cm, metadata: { ...cm.metadata, name: 'o2', uid: 'u2', resourceVersion: '2' } } : null;
    res.write(JSON.stringify({ type: 'ADDED', object }) + '\n');
    process.send({ sent: true });
    // Keep the stream open; if the process is still alive after SURVIVE_MS,
    // the informer survived the event.
    setTimeout(() => {
      process.send({ ok: `the informer survived ${CASES[which]}${errors.length ? ` and reported: ${errors[0]}` : ''}` }, () => process.exit(0));
    }, SURVIVE_MS);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  server.unref();

  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    // skipTLSVerify: the library refuses plain http without it (config.js:553).
    clusters: [{ name: 'c', server: `http://127.0.0.1:${server.address().port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u', namespace: 'default' }],
    currentContext: 'x',
  });
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps', () =>
    api.listNamespacedConfigMap({ namespace: 'default' }),
  );
  const errors = [];
  if (which === 'throw') {
    // The application's handler fails on one object, as application code may.
    informer.on('add', (obj) => {
      if (obj.metadata.name === 'o2') throw new Error('the application failed on default/o2');
    });
  }
  informer.on('error', (err) => {
    errors.push(String(err && err.message ? err.message : err));
    process.stderr.write(`informer error: ${errors.at(-1)}\n`);
  });
  await informer.start();
  // Keep the child alive until the verdict timer (or the crash) ends it.
  setTimeout(() => {
    process.stderr.write(`no watch request within ${CHILD_BOUND_MS} ms\n`);
    process.exit(3);
  }, CHILD_BOUND_MS);
}

// kverify-client/v1 adapter for @kubernetes/client-node's informer
// (makeInformer -> ListWatch, dist/cache.js). See README.md.
//
//   add / update / delete  <- informer.on('add' | 'update' | 'delete'); the
//                             library hands only the new object to 'update',
//                             so update lines carry no oldRv.
//   synced                 <- the end of the first successful list. ListWatch
//                             has no "synced" event ('connect' fires *before*
//                             the list, and start() can resolve before a
//                             relist that a 410 on the first watch started),
//                             so listFn observes it: see below.
//   state.rv               <- informer.latestResourceVersion()
//   state.cache            <- informer.list(namespace), the library's own store
//   error                  <- informer.on('error'); the informer then stops, and
//                             we restart it after 5 s, as the library's example
//                             does (examples/typescript/informer/informer.ts).

import { emit, ensureRuntime, env, installedVersion, log, message, ref, serve } from './protocol.mjs';

await ensureRuntime(import.meta.url);
// The release judged: the package.json dependency named by the first
// argument (an npm alias such as client-node-0.22.3, for the library's
// history), else the pinned @kubernetes/client-node.
const PKG = process.argv[2] || '@kubernetes/client-node';
const k8s = await import(PKG);
const VERSION = installedVersion(PKG);
// 0.x's generated API takes positional arguments and resolves to
// { response, body }, and its informer's list function must too; 1.x and
// later take an object of parameters and resolve to the body.
const LEGACY = VERSION.startsWith('0.');
// The restart delay of the library's informer example
// (kubernetes-client/javascript examples/typescript/informer/informer.ts:
// "Restart informer after 5sec").
const RESTART_DELAY_MS = 5000;

const { server, namespace, resource } = env();
if (resource !== 'configmaps') {
  log(`KVERIFY_RESOURCE=${resource}: only configmaps is supported`);
  process.exit(2);
}

const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'kverify', server, skipTLSVerify: true }],
  users: [{ name: 'kverify' }],
  contexts: [{ name: 'kverify', cluster: 'kverify', user: 'kverify', namespace }],
  currentContext: 'kverify',
});
const api = kc.makeApiClient(k8s.CoreV1Api);
const path = `/api/v1/namespaces/${namespace}/configmaps`;
let synced = false;
let stopping = false;
let restartTimer;

// The list function the informer calls. Wrapped only to observe the end of
// the first successful list: ListWatch.doneHandler (dist/cache.js) awaits
// this promise, then, in the same job, calls the handlers for every item
// and sets its resourceVersion from the list. A setImmediate queued here runs
// after that job and before any watch response can have arrived.
const listFn = async () => {
  const answer = LEGACY ? await api.listNamespacedConfigMap(namespace) : await api.listNamespacedConfigMap({ namespace });
  const list = LEGACY ? answer.body : answer;
  setImmediate(() => {
    const listed = (list.metadata && list.metadata.resourceVersion) || '';
    if (!synced && !stopping && informer.latestResourceVersion() === listed) {
      synced = true;
      emit({ type: 'synced' });
    }
  });
  return answer;
};
const informer = k8s.makeInformer(kc, path, listFn);

informer.on('add', (obj) => emit({ type: 'add', ...ref(obj) }));
informer.on('update', (obj) => emit({ type: 'update', ...ref(obj) }));
informer.on('delete', (obj) => emit({ type: 'delete', ...ref(obj) }));
informer.on('connect', () => log('connect (list and/or watch starting), rv', JSON.stringify(informer.latestResourceVersion())));
informer.on('error', (err) => {
  emit({ type: 'error', message: message(err) });
  log('informer error:', message(err));
  if (stopping) return;
  // The informer has stopped itself (ListWatch.doneHandler returns without
  // reconnecting on any error but 410 and a client-side timeout); restart it
  // the way the library's example does.
  clearTimeout(restartTimer);
  restartTimer = setTimeout(() => {
    if (!stopping) start('restart after error');
  }, RESTART_DELAY_MS);
});

function start(why) {
  log(`informer.start() (${why})`);
  informer.start().then(
    () => {},
    (err) => {
      emit({ type: 'error', message: `start: ${message(err)}` });
      log('informer.start() rejected:', message(err));
    },
  );
}

serve({
  client: `@kubernetes/client-node@${VERSION}`,
  state: () => ({
    rv: informer.latestResourceVersion() || '',
    cache: (informer.list(namespace) || []).map(ref),
  }),
  stop: async () => {
    stopping = true;
    clearTimeout(restartTimer);
    await informer.stop();
  },
});
start('initial');

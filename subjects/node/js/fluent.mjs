// kverify-client/v1 adapter for kubernetes-fluent-client's Watcher
// (K8s(kind.ConfigMap).InNamespace(ns).Watch(cb), dist/fluent/watch.js).
// See README.md.
//
//   add / update / delete  <- the Watch callback (payload, phase) with phase
//                             ADDED / MODIFIED / DELETED. The callback gets no
//                             old object, so update lines carry no oldRv.
//                             BOOKMARK is logged on stderr only; ERROR (a
//                             Status in the stream other than 410) and a call
//                             with no object become error lines.
//   synced                 <- the Watcher has no synced signal. We emit it the
//                             first time a top-level list has completed
//                             (WatchEvent.LIST for its last page, no LIST_ERROR
//                             after it), seen at the earliest of start()
//                             resolving or WatchEvent.CONNECT: both come after
//                             #watch() has awaited #list(), which awaits the
//                             callback for every listed item.
//   state.rv               <- "": the Watcher exposes no version. Its private
//                             #resourceVersion (mirrored in rv below, for the
//                             log) is set from each list's version, cleared on
//                             a 410 and never moved by watch events, so it is
//                             not a version the cache is synced to.
//   state.cache            <- the Watcher's private #cache (a Map keyed by
//                             metadata.uid), mirrored from WatchEvent.DATA,
//                             which #process emits right after each cache
//                             set/delete. The library exposes no cache, so the
//                             adapter keeps this mirror, keyed the same way.
//   error                  <- WatchEvent.LIST_ERROR, WATCH_ERROR, NETWORK_ERROR,
//                             DATA_ERROR, OLD_RESOURCE_VERSION, GIVE_UP.
//   restart policy         <- the library's own (resync check every 5 s, relist
//                             every 600 s, unlimited retries): defaults, no
//                             WatchCfg passed.
//
// The Watcher reads its cluster from KubeConfig.loadFromDefault() on every
// request, so we write a kubeconfig for KVERIFY_SERVER_URL to a temporary
// file and point KUBECONFIG at it (useKubeconfig).

import { emit, ensureRuntime, env, installedVersion, log, message, ref, serve, useKubeconfig } from './protocol.mjs';

await ensureRuntime(import.meta.url);

// The release judged: the package.json dependency named by the first
// argument (an npm alias such as fluent-2.6.5, for the library's history),
// else the pinned kubernetes-fluent-client.
const PKG = process.argv[2] || 'kubernetes-fluent-client';
const { server, namespace, resource } = env();
if (resource !== 'configmaps') {
  log(`KVERIFY_RESOURCE=${resource}: only configmaps is supported`);
  process.exit(2);
}

useKubeconfig(server, namespace);

const { K8s, kind, WatchEvent } = await import(PKG);

let stopping = false;
let synced = false;
let listComplete = false; // a top-level list finished since the last CONNECT
let rv = ''; // mirror of Watcher.#resourceVersion
const cache = new Map(); // mirror of Watcher.#cache: metadata.uid -> object

const watcher = K8s(kind.ConfigMap)
  .InNamespace(namespace)
  .Watch((obj, phase) => {
    if ((phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') && !(obj && obj.metadata)) {
      // A watch event without an object (the library passes it on, then
      // fails on payload.metadata.uid and reports data_error): no key to
      // report, so this handler call becomes an error line.
      emit({ type: 'error', message: `callback called with ${phase} and no object` });
      return;
    }
    switch (phase) {
      case 'ADDED':
        emit({ type: 'add', ...ref(obj) });
        break;
      case 'MODIFIED':
        emit({ type: 'update', ...ref(obj) });
        break;
      case 'DELETED':
        emit({ type: 'delete', ...ref(obj) });
        break;
      case 'ERROR':
        emit({ type: 'error', message: `watch event ERROR: ${message(obj)}` });
        break;
      default:
        log(`callback phase ${phase}`, JSON.stringify(ref(obj)));
    }
  });

const ev = watcher.events;
function maybeSynced() {
  if (!synced && listComplete && !stopping) {
    synced = true;
    emit({ type: 'synced' });
  }
}
ev.on(WatchEvent.LIST, (list) => {
  rv = (list && list.metadata && list.metadata.resourceVersion) || '';
  if (!(list && list.metadata && list.metadata.continue)) listComplete = true;
  log(`list: ${(list && list.items && list.items.length) || 0} items, rv ${JSON.stringify(rv)}`);
});
ev.on(WatchEvent.DATA, (obj, phase) => {
  const uid = obj && obj.metadata ? obj.metadata.uid : undefined;
  if (phase === 'ADDED' || phase === 'MODIFIED') cache.set(uid, obj);
  else if (phase === 'DELETED') cache.delete(uid);
});
ev.on(WatchEvent.CONNECT, (path) => {
  log('connect', path, 'rv', JSON.stringify(rv));
  maybeSynced();
  listComplete = false;
});
ev.on(WatchEvent.OLD_RESOURCE_VERSION, (old) => {
  rv = '';
  emit({ type: 'error', message: `old_resource_version: ${message(old)}` });
});
for (const name of ['LIST_ERROR', 'WATCH_ERROR', 'NETWORK_ERROR', 'DATA_ERROR', 'GIVE_UP']) {
  ev.on(WatchEvent[name], (err) => {
    if (name === 'LIST_ERROR') listComplete = false;
    if (stopping) return;
    emit({ type: 'error', message: `${WatchEvent[name]}: ${message(err)}` });
    log(WatchEvent[name], message(err));
  });
}
for (const name of ['RECONNECT', 'RECONNECT_PENDING', 'ABORT']) {
  ev.on(WatchEvent[name], (arg) => log(WatchEvent[name], arg === undefined ? '' : message(arg)));
}

serve({
  client: `kubernetes-fluent-client@${installedVersion(PKG)}`,
  // The Watcher exposes no version: its #resourceVersion is private, moves
  // only with lists (every reconnect relists) and is never a resume point
  // the application can read, so the adapter reports none ("") and the
  // checks judge the cache alone.
  state: () => ({ rv: '', cache: [...cache.values()].map(ref) }),
  stop: async () => {
    stopping = true;
    watcher.close();
  },
});
watcher.start().then(
  () => maybeSynced(),
  (err) => {
    emit({ type: 'error', message: `start: ${message(err)}` });
    log('start() rejected:', message(err));
  },
);

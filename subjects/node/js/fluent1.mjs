// kverify-client/v1 adapter for kubernetes-fluent-client 1.x's watch
// (K8s(kind.ConfigMap).InNamespace(ns).Watch(cb, cfg) -> ExecWatch,
// dist/fluent/watch.js). See README.md.
//
// 1.x has no informer: Watch is a bare watch (GET ...?watch=true&
// allowWatchBookmarks=true) with no resourceVersion, never preceded by a
// list, and the library keeps neither a cache nor a version. What an
// application of 1.x has is the callback, so the adapter reports what such
// an application would hold:
//
//   add / update / delete  <- the Watch callback (payload, phase) with phase
//                             ADDED / MODIFIED / DELETED (the watch's events,
//                             including the server's initial ADDED events for
//                             a watch from no version). No old object: update
//                             lines carry no oldRv. BOOKMARK gives synced (see
//                             below) and is otherwise logged on stderr; ERROR (a
//                             Status in the stream) and a call with no object
//                             become error lines.
//   synced                 <- the first BOOKMARK the callback gets whose object
//                             carries the annotation k8s.io/initial-events-end
//                             = "true": the server's word that the initial
//                             ADDED events are complete. 1.x asks for
//                             bookmarks (allowWatchBookmarks=true) and hands
//                             every event to the callback, bookmarks included,
//                             so this is what a 1.x application can know. An
//                             API server sends that bookmark to a watch from
//                             no version only with the WatchList feature on
//                             (it then treats the watch as sendInitialEvents=
//                             true), as kverify's model server does; without
//                             it nothing in 1.x marks the end of the initial
//                             state (no list), and synced never comes.
//   state.rv               <- "": the library sends no version and keeps none
//                             (every watch, the first and each retry, starts
//                             from no version).
//   state.cache            <- the library keeps none; the adapter folds the
//                             callback's calls into a map by namespace/name
//                             (ADDED/MODIFIED set, DELETED delete): the view an
//                             application builds from the callback, which is
//                             all 1.x gives it.
//   error                  <- WatchCfg.logFn for "stream error" (a failed
//                             request, a stream that fails) and "watch callback
//                             error" (a line that is not JSON); WatchCfg.retryFail
//                             (the library has given up).
//   restart policy         <- the library's own, defaults (retryMax 5,
//                             retryDelaySec 5): after a failed request or a
//                             stream error, a new watch from no version 5 s
//                             later, at most 5 failures in a row (reset when a
//                             watch is answered), then retryFail and no more
//                             watches. A stream the server ends cleanly is not
//                             watched again (its 'close'/'finish' only
//                             detaches the handlers). logFn and retryFail are
//                             observers: they change none of it.
//   stop                   <- WatchController.abort().

import { emit, ensureRuntime, env, installedVersion, log, message, ref, serve, useKubeconfig } from './protocol.mjs';

await ensureRuntime(import.meta.url);

// The release judged: the package.json dependency named by the first
// argument (an npm alias of a 1.x release, fluent-1.10.0).
const PKG = process.argv[2] || 'fluent-1.10.0';
const { server, namespace, resource } = env();
if (resource !== 'configmaps') {
  log(`KVERIFY_RESOURCE=${resource}: only configmaps is supported`);
  process.exit(2);
}
// ExecWatch reads its cluster from KubeConfig.loadFromDefault() (k8sCfg,
// dist/fluent/utils.js).
useKubeconfig(server, namespace);

const { K8s, kind } = await import(PKG);

// The annotation of the bookmark that ends a watch's initial events
// (metav1.InitialEventsAnnotationKey).
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

let stopping = false;
let synced = false;
const view = new Map(); // namespace/name -> the object the callback last gave

function callback(obj, phase) {
  if ((phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') && !(obj && obj.metadata)) {
    // A watch event without an object: no key to report.
    emit({ type: 'error', message: `callback called with ${phase} and no object` });
    return;
  }
  const r = ref(obj);
  switch (phase) {
    case 'ADDED':
      view.set(r.key, obj);
      emit({ type: 'add', ...r });
      break;
    case 'MODIFIED':
      view.set(r.key, obj);
      emit({ type: 'update', ...r });
      break;
    case 'DELETED':
      view.delete(r.key);
      emit({ type: 'delete', ...r });
      break;
    case 'ERROR':
      emit({ type: 'error', message: `watch event ERROR: ${message(obj)}` });
      break;
    case 'BOOKMARK': {
      const end = obj && obj.metadata && obj.metadata.annotations && obj.metadata.annotations[INITIAL_EVENTS_END] === 'true';
      log(`callback phase BOOKMARK${end ? ' (initial events end)' : ''}`, JSON.stringify(r));
      if (end && !synced && !stopping) {
        synced = true;
        emit({ type: 'synced' });
      }
      break;
    }
    default:
      log(`callback phase ${phase}`, JSON.stringify(r));
  }
}

const watchCfg = {
  // Observers only: ExecWatch calls logFn(value, label) and, once it has
  // given up, retryFail(err); retryMax and retryDelaySec keep their defaults.
  logFn: (value, label) => {
    if (stopping) return;
    if (label === 'stream error' || label === 'watch callback error') {
      emit({ type: 'error', message: `${label}: ${message(value)}` });
    }
    log(label === undefined ? message(value) : label === 'ExecWatch' ? 'ExecWatch' : `${label}: ${message(value)}`);
  },
  retryFail: (err) => {
    if (stopping) return;
    emit({ type: 'error', message: `retryFail (gave up): ${message(err)}` });
  },
};

// Watch resolves once the first request is answered or has failed (a
// failure schedules the retry and resolves too).
const started = K8s(kind.ConfigMap).InNamespace(namespace).Watch(callback, watchCfg);
started.catch((err) => {
  emit({ type: 'error', message: `Watch: ${message(err)}` });
  log('Watch() rejected:', message(err));
});

serve({
  client: `kubernetes-fluent-client@${installedVersion(PKG)}`,
  state: () => ({ rv: '', cache: [...view.values()].map(ref) }),
  stop: async () => {
    stopping = true;
    // The controller exists once Watch has resolved; until then (the first
    // request outstanding, at most its 15 s timeout) there is nothing to
    // abort but that request, which the process's exit ends.
    const ctrl = await Promise.race([started.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
    if (ctrl) ctrl.abort();
  },
});

#!/usr/bin/env python3
"""kverify-client/v1 adapter for the Kubernetes Python client
(kubernetes.watch.Watch; traces/client.schema.json).

It watches ConfigMaps as the client's documentation tells its users to
(Watch.stream's docstring: "Note that watching an API resource can expire.
The method tries to resume automatically once from the last result, but if
that last result is too old as well, an ApiException exception will be
thrown with code 410. In that case you have to recover yourself, probably
by listing the API resource to obtain the latest state and then watching
from that state on by setting resource_version to one returned from
listing."):

    lst = v1.list_namespaced_config_map(ns)             # the list
    for e in Watch().stream(v1.list_namespaced_config_map, ns,
                            resource_version=lst.metadata.resource_version):
        ... e['type'], e['object']                        # the watch

and on an ApiException with status 410 lists again. The documentation says
nothing of other failures (a refused connection, a 500, an event the client
cannot decode, an error raised while handling an event); the adapter, as a
careful user would, reports each as an error line, waits a second and lists
again. The adapter is the user's code: it folds the list and the events
into a cache keyed by namespace/name and reports them as handler calls.

    add / update   <- a listed object not cached / cached at another
                      version; ADDED or MODIFIED: add when the key is not
                      cached, update (with oldRv) when it is
    delete         <- a cached key a relist did not list; DELETED
    synced         <- the first list applied
    error          <- every failure, as above
    state.rv       <- "": the client reports no version of a cache
    stop           <- exit

Run it with a python3 that has the kubernetes package (Debian's
python3-kubernetes: /usr/bin/python3).
"""

import json
import os
import sys
import threading
import time

try:
    import kubernetes
    from kubernetes import client, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:  # reported by the hello's absence and this line
    sys.stderr.write("python-adapter: %s (install python3-kubernetes)\n" % e)
    sys.exit(2)

PROTOCOL = "kverify-client/v1"
lock = threading.Lock()
cache = {}  # namespace/name -> resourceVersion


def log(msg):
    sys.stderr.write("python-adapter: %s\n" % msg)
    sys.stderr.flush()


def emit(line):
    # under lock: lines and the cache change together
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def key_rv(obj):
    meta = obj.metadata
    rv = meta.resource_version
    return "%s/%s" % (meta.namespace or "", meta.name or ""), "" if rv is None else str(rv)


def upsert(obj):
    k, rv = key_rv(obj)
    if k in cache:
        old, cache[k] = cache[k], rv
        emit({"type": "update", "key": k, "rv": rv, "oldRv": old})
    else:
        cache[k] = rv
        emit({"type": "add", "key": k, "rv": rv})


def relist(items):
    with lock:
        listed = set()
        for obj in items:
            k, rv = key_rv(obj)
            listed.add(k)
            if cache.get(k) != rv:
                upsert(obj)
        for k in sorted(set(cache) - listed):
            emit({"type": "delete", "key": k, "rv": cache.pop(k)})


def apply(typ, obj):
    with lock:
        if typ == "DELETED":
            k, rv = key_rv(obj)
            cache.pop(k, None)
            emit({"type": "delete", "key": k, "rv": rv})
        else:
            upsert(obj)


def error(msg):
    with lock:
        emit({"type": "error", "message": msg[:500]})


def run(v1, ns):
    synced = False
    while True:
        try:
            lst = v1.list_namespaced_config_map(ns)
            relist(lst.items)
            if not synced:
                synced = True
                with lock:
                    emit({"type": "synced"})
            w = watch.Watch()
            for e in w.stream(v1.list_namespaced_config_map, ns, resource_version=lst.metadata.resource_version):
                apply(e["type"], e["object"])
            error("Watch.stream ended")
        except ApiException as e:
            if e.status == 410:
                log("410: listing again")
                continue
            error("ApiException %s: %s" % (e.status, e.reason))
            time.sleep(1)
        except Exception as e:
            error("%s: %s" % (type(e).__name__, e))
            time.sleep(1)


def main():
    url = os.environ.get("KVERIFY_SERVER_URL")
    if not url:
        log("KVERIFY_SERVER_URL is not set")
        sys.exit(2)
    ns = os.environ.get("KVERIFY_NAMESPACE") or "default"
    if (os.environ.get("KVERIFY_RESOURCE") or "configmaps") != "configmaps":
        log("only configmaps is supported")
        sys.exit(2)
    cfg = client.Configuration()
    cfg.host = url
    v1 = client.CoreV1Api(client.ApiClient(cfg))
    with lock:
        emit({"type": "hello", "protocol": PROTOCOL, "client": "kubernetes (Python)@" + kubernetes.__version__})
    threading.Thread(target=run, args=(v1, ns), daemon=True).start()
    for raw in sys.stdin:
        try:
            op = json.loads(raw).get("op")
        except ValueError:
            log("ignoring input that is not JSON: %r" % raw)
            continue
        if op == "state":
            with lock:
                emit({"type": "state", "rv": "", "cache": [{"key": k, "rv": v} for k, v in sorted(cache.items())]})
        elif op == "stop":
            break
        else:
            log("ignoring unknown input %r" % raw)
    with lock:
        emit({"type": "stopped"})
    os._exit(0)  # the watch thread may be inside a read: the process ends it


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The Kubernetes Python client's Watch.stream yields an object of another
kind, sent on a ConfigMap watch, as a V1ConfigMap; and a null object as
None.

Watch.stream's docstring promises 'object': "A model representation of
raw_object. The name of model will be determined based on the func's doc
string" (kubernetes/watch/watch.py:131-136 in 22.6.0). unmarshal_event
(watch.py:96-117) deserializes every ADDED, MODIFIED and DELETED event's
object as that model without comparing the object's kind, and records its
resourceVersion, whatever it is, as the one to resume from.

Sequence: a server whose ConfigMap watch sends {"type":"ADDED","object":
{"kind":"Secret","metadata":{"name":"ghost","resourceVersion":"2"}}}, then
{"type":"ADDED","object":null}, then ends; for e in Watch().stream(
v1.list_namespaced_config_map, "default", resource_version="1"): the first
e['object'] is a V1ConfigMap named ghost (raw_object's kind: Secret), the
second None.

It needs only the kubernetes package (Debian's python3-kubernetes: run it
with /usr/bin/python3) and the standard library. It prints one line and
exits: "DEFECT: ..." and 1 when the stream yields the Secret as a
V1ConfigMap (or a null object), "OK: ..." and 0 when it raises or skips
them.
"""

import http.server
import json
import sys
import threading

import kubernetes
from kubernetes import client, watch

EVENTS = [
    {"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Secret",
                                 "metadata": {"name": "ghost", "namespace": "default", "resourceVersion": "2"}}},
    {"type": "ADDED", "object": None},
]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the stream ends when the connection closes

    def log_message(self, *args):
        pass

    def do_GET(self):
        if "watch=True" not in self.path and "watch=true" not in self.path:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        for e in EVENTS:
            self.wfile.write((json.dumps(e) + "\n").encode())


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    cfg = client.Configuration()
    cfg.host = "http://127.0.0.1:%d" % srv.server_address[1]
    v1 = client.CoreV1Api(client.ApiClient(cfg))
    got = []
    w = watch.Watch()
    try:
        for e in w.stream(v1.list_namespaced_config_map, "default", resource_version="1"):
            got.append(e)
            if len(got) == len(EVENTS):
                w.stop()
    except Exception as e:
        print("OK: Watch.stream raised %s: %s" % (type(e).__name__, e))
        sys.exit(0)
    finally:
        srv.shutdown()
    bad = []
    for e in got:
        obj, raw = e["object"], e["raw_object"]
        if isinstance(obj, client.V1ConfigMap) and isinstance(raw, dict) and raw.get("kind") != "ConfigMap":
            bad.append("a %s as a V1ConfigMap named %s (resourceVersion %s, the stream's to resume from: %s)" % (
                raw.get("kind"), obj.metadata.name, obj.metadata.resource_version, w.resource_version))
        elif obj is None:
            bad.append("a null object as None")
    if bad:
        print("DEFECT: kubernetes %s Watch.stream on a ConfigMap watch yielded %s" % (kubernetes.__version__, "; and ".join(bad)))
        sys.exit(1)
    print("OK: kubernetes %s Watch.stream yielded neither: %s" % (kubernetes.__version__, [e["type"] for e in got]))
    sys.exit(0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""kubectl get -w --output-watch-events -o json prints each page of a
chunked list as one ADDED event whose object is the whole page.

--output-watch-events promises "Existing objects are output as initial
ADDED events". With more objects than --chunk-size (500 by default) the
list comes in pages; kubectl's resource builder makes one Info per page,
Result.Object wraps the pages in a v1.List (k8s.io/cli-runtime
pkg/resource/result.go:141-172), and get's watch prints meta.ExtractList
of it, each page wrapped in one ADDED WatchEvent (k8s.io/kubectl
pkg/cmd/get/get.go:646-682).

Sequence: a server with three ConfigMaps; kubectl get configmaps -w
--output-watch-events -o json --chunk-size 2: the list comes in two pages
(limit=2), kubectl prints two ADDED events whose objects are ConfigMapLists
(2 items and 1), then watches from the list's version; the server ends the
watch at once and kubectl exits.

It needs only kubectl ($KUBECTL, else kubectl on PATH) and Python's
standard library (a local HTTP server plays the API server). It prints one
line and exits: "DEFECT: ..." and 1 when an ADDED event's object is a
list, "OK: ..." and 0 when kubectl printed one ADDED event per object.
"""

import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

NAMES = ["a", "b", "c"]
RV = "7"


def configmap(name):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": RV, "uid": "uid-" + name}}


DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "configmaps", "singularName": "configmap", "namespaced": True, "kind": "ConfigMap",
         "verbs": ["get", "list", "watch"], "shortNames": ["cm"]}]},
}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path, _, query = self.path.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
        if path in DISCOVERY:
            return self.send_json(DISCOVERY[path])
        if path != "/api/v1/namespaces/default/configmaps":
            self.send_response(404)
            self.end_headers()
            return
        if params.get("watch") == "true":
            # an empty stream that ends at once: kubectl then exits
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            return
        limit = int(params.get("limit", "0") or 0)
        start = int(params.get("continue", "0") or 0)
        end = len(NAMES) if limit == 0 else min(len(NAMES), start + limit)
        meta = {"resourceVersion": RV}
        if end < len(NAMES):
            meta["continue"] = str(end)
        self.send_json({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": meta,
                        "items": [configmap(n) for n in NAMES[start:end]]})


def events(text):
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        ev, i = dec.raw_decode(text, i)
        out.append(ev)


def main():
    kubectl = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not kubectl:
        print("no kubectl: set KUBECTL or put kubectl on PATH", file=sys.stderr)
        sys.exit(2)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    tmp = tempfile.mkdtemp()
    try:
        env = dict(os.environ, KUBECONFIG=os.path.join(tmp, "kubeconfig"), HOME=tmp)
        out = subprocess.run([kubectl, "--server", "http://127.0.0.1:%d" % srv.server_address[1],
                              "--cache-dir", os.path.join(tmp, "cache"), "-n", "default",
                              "get", "configmaps", "-w", "--output-watch-events", "-o", "json", "--chunk-size", "2"],
                             capture_output=True, text=True, timeout=30, env=env).stdout
    finally:
        srv.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    evs = events(out)
    lists = [e for e in evs if e.get("type") == "ADDED" and "items" in e.get("object", {})]
    if lists:
        print("DEFECT: kubectl get -w --output-watch-events -o json --chunk-size 2 printed %d ADDED events for 3 ConfigMaps, "
              "each a whole page (%s), not one per object" % (
                  len(evs), ", ".join("%s of %d" % (e["object"].get("kind"), len(e["object"]["items"])) for e in lists)))
        sys.exit(1)
    names = sorted(e.get("object", {}).get("metadata", {}).get("name", "") for e in evs if e.get("type") == "ADDED")
    print("OK: kubectl printed one ADDED event per object: %s" % names)
    sys.exit(0 if names == NAMES else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""kverify-client/v1 adapter for kubectl get -w (traces/client.schema.json).

It runs, once,

    kubectl --server $KVERIFY_SERVER_URL -n $KVERIFY_NAMESPACE \
        get $KVERIFY_RESOURCE -w --output-watch-events -o json -v=6

which lists (in pages of 500, --chunk-size), prints every listed object as
an ADDED event, then watches once from the list's version and prints each
event, and exits when the stream ends (closed, an ERROR, a cut) or a
request fails: a single-shot client (kverify's wire.Subject.SingleShot).
The adapter is the user who reads that output: it folds the events into a
cache keyed by namespace/name and reports them as handler calls.

    add / update      <- ADDED or MODIFIED: add when the key is not cached,
                         update (with oldRv) when it is
    delete            <- DELETED (of a key not cached: still reported, as a
                         user's code would see it)
    synced            <- kubectl opened its watch (its -v=6 log names the
                         GET ...watch=true): the list it printed before is
                         complete (see on_watch_opened)
    error             <- kubectl exited (its status and last log line), and
                         output that is not a JSON event
    state.rv          <- "": kubectl reports no version
    stop              <- SIGTERM to kubectl, then exit

Everything but protocol lines goes to stderr. The kubectl binary is
$KVERIFY_KUBECTL, else kubectl on PATH. Only the Python standard library is
used (python3 >= 3.8).
"""

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile

PROTOCOL = "kverify-client/v1"

# kubectl's -v=6 log line of the request that opens its watch (client-go's
# round_trippers: "GET http://.../configmaps?resourceVersion=5&watch=true
# 200 OK in 1 milliseconds" up to v1.32; structured from later releases,
# '"Response" verb="GET" url="http://...&watch=true" status="200 OK"').
WATCH_OPENED = re.compile(
    r'\bGET \S+[?&]watch=true\S* (\d{3})\b|verb="GET" url="[^"]*[?&]watch=true[^"]*" status="(\d{3})')


def log(msg):
    sys.stderr.write("kubectl-adapter: %s\n" % msg)
    sys.stderr.flush()


def emit(line):
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def kubectl_version(kubectl):
    """kubectl's client version (gitVersion), or "unknown"."""
    try:
        out = subprocess.run([kubectl, "version", "--client", "-o", "json"],
                             capture_output=True, text=True, timeout=30).stdout
        return json.loads(out)["clientVersion"]["gitVersion"]
    except Exception as e:  # an old kubectl without -o json, or none at all
        log("kubectl version: %s" % e)
        return "unknown"


class Adapter:
    def __init__(self, kubectl, server, namespace, resource):
        self.cache = {}  # namespace/name -> resourceVersion
        self.synced = False
        self.out_buf = ""  # kubectl's stdout not yet decoded
        self.err_buf = b""
        self.last_log = ""
        self.decoder = json.JSONDecoder()
        self.tmp = tempfile.mkdtemp(prefix="kverify-kubectl-")
        env = dict(os.environ)
        # No user configuration: an empty kubeconfig, a private cache.
        env["KUBECONFIG"] = os.path.join(self.tmp, "kubeconfig")
        env["HOME"] = self.tmp
        argv = [kubectl, "--server", server, "--cache-dir", os.path.join(self.tmp, "cache"),
                "-n", namespace, "get", resource, "-w", "--output-watch-events", "-o", "json", "-v=6"]
        log("running %s" % " ".join(argv))
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(sys.stdin, selectors.EVENT_READ, "stdin")
        self.sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self.sel.register(self.proc.stderr, selectors.EVENT_READ, "err")
        self.open_pipes = 2
        self.stdin_buf = b""

    # kubectl's output: concatenated JSON watch events.
    def on_out(self, data):
        self.out_buf += data.decode("utf-8", errors="replace")
        while True:
            s = self.out_buf.lstrip()
            if not s:
                self.out_buf = ""
                return
            try:
                ev, end = self.decoder.raw_decode(s)
            except ValueError:
                self.out_buf = s
                return  # an incomplete event: wait for more
            self.out_buf = s[end:]
            self.on_event(ev)

    def on_event(self, ev):
        typ = ev.get("type") if isinstance(ev, dict) else None
        obj = ev.get("object") if isinstance(ev, dict) else None
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if typ not in ("ADDED", "MODIFIED", "DELETED") or not isinstance(meta, dict) or not meta.get("name"):
            # Not an event of one object: reported, not folded (kubectl
            # prints each page of a list of more than --chunk-size
            # objects as one ADDED event of the whole page).
            kind = obj.get("kind") if isinstance(obj, dict) else None
            emit({"type": "error", "message": "kubectl printed a %s event of %s: %s" % (typ, kind, json.dumps(ev)[:200])})
            return
        key = "%s/%s" % (meta.get("namespace", ""), meta.get("name", ""))
        rv = meta.get("resourceVersion", "")
        if not isinstance(rv, str):
            rv = json.dumps(rv)
        if typ == "DELETED":
            self.cache.pop(key, None)
            emit({"type": "delete", "key": key, "rv": rv})
        elif key in self.cache:
            old = self.cache[key]
            self.cache[key] = rv
            emit({"type": "update", "key": key, "rv": rv, "oldRv": old})
        else:
            self.cache[key] = rv
            emit({"type": "add", "key": key, "rv": rv})

    def on_err(self, data):
        sys.stderr.buffer.write(data)
        sys.stderr.flush()
        self.err_buf += data
        *lines, self.err_buf = self.err_buf.split(b"\n")
        for raw in lines:
            text = raw.decode("utf-8", errors="replace")
            if text.strip():
                self.last_log = text.strip()
            m = WATCH_OPENED.search(text)
            if m and (m.group(1) or m.group(2)) == "200":
                self.on_watch_opened()

    def on_watch_opened(self):
        """kubectl prints its list and flushes it (get.go's watch: the
        list's objects, writer.Flush) before it requests the watch, so
        every byte of the list is in the stdout pipe by now: read what the
        pipe holds, then report synced."""
        if self.synced:
            return
        self.drain_out()
        self.synced = True
        emit({"type": "synced"})

    def drain_out(self):
        while True:
            try:
                data = os.read(self.proc.stdout.fileno(), 65536)
            except BlockingIOError:
                return
            if not data:
                return
            self.on_out(data)

    def state(self):
        cache = [{"key": k, "rv": v} for k, v in sorted(self.cache.items())]
        emit({"type": "state", "rv": "", "cache": cache})

    def stop(self, why):
        log("stopping (%s)" % why)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        emit({"type": "stopped"})
        shutil.rmtree(self.tmp, ignore_errors=True)
        sys.exit(0)

    def on_stdin(self):
        data = os.read(sys.stdin.fileno(), 65536)
        if not data:
            self.stop("end of stdin")
        self.stdin_buf += data
        *lines, self.stdin_buf = self.stdin_buf.split(b"\n")
        for raw in lines:
            try:
                op = json.loads(raw).get("op")
            except ValueError:
                log("ignoring input that is not JSON: %r" % raw)
                continue
            if op == "state":
                self.state()
            elif op == "stop":
                self.stop("stop")
            else:
                log("ignoring unknown input %r" % raw)

    def run(self):
        while True:
            for key, _ in self.sel.select():
                which = key.data
                if which == "stdin":
                    self.on_stdin()
                    continue
                try:
                    data = os.read(key.fileobj.fileno(), 65536)
                except BlockingIOError:
                    continue
                if data:
                    (self.on_out if which == "out" else self.on_err)(data)
                    continue
                self.sel.unregister(key.fileobj)
                self.open_pipes -= 1
                if self.open_pipes == 0:
                    code = self.proc.wait()
                    emit({"type": "error", "message": "kubectl exited with status %d: %s" % (code, self.last_log)})


def main():
    server = os.environ.get("KVERIFY_SERVER_URL")
    if not server:
        log("KVERIFY_SERVER_URL is not set")
        sys.exit(2)
    kubectl = os.environ.get("KVERIFY_KUBECTL") or shutil.which("kubectl")
    if not kubectl:
        log("no kubectl: set KVERIFY_KUBECTL or put kubectl on PATH")
        sys.exit(2)
    emit({"type": "hello", "protocol": PROTOCOL, "client": "kubectl@" + kubectl_version(kubectl)})
    Adapter(kubectl, server, os.environ.get("KVERIFY_NAMESPACE") or "default",
            os.environ.get("KVERIFY_RESOURCE") or "configmaps").run()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Replay kverify's golden vectors against a small work queue and ring
written in Python (standard library only).

The vectors (traces/vectors/data/*.jsonl, format kverify-vector/v1:
JSON Lines, a header line then one line per operation) say what the spec
models expect; this file shows that an implementation in another language
can be held to them without Go.

    python3 examples/python/replay.py [traces/vectors/data]

Exits 0 when every vector replays, 1 on the first mismatch (named: file,
vector, step), 2 on a malformed file.
"""

import json
import os
import sys

FORMAT = "kverify-vector/v1"


class Queue:
    """A work queue with kverify's contract: client-go's, except that Done
    of an item not being processed changes nothing (client-go re-queues it)
    and a drain waits for queued items too (vectors drain only once nothing
    is outstanding, so here it just shuts down)."""

    def __init__(self):
        self.queue = []  # FIFO of dirty items not being processed
        self.dirty = set()
        self.processing = set()
        self.shutting_down = False

    def add(self, key):
        if self.shutting_down or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.queue.append(key)

    def get(self):
        if not self.queue:
            if not self.shutting_down:
                raise RuntimeError("Get would block: a vector never asks that")
            return "", True
        key = self.queue.pop(0)
        self.dirty.discard(key)
        self.processing.add(key)
        return key, False

    def done(self, key):
        if key not in self.processing:
            return
        self.processing.discard(key)
        if key in self.dirty:
            self.queue.append(key)

    def length(self):
        return len(self.queue)

    def shut_down(self):
        self.shutting_down = True

    def shut_down_with_drain(self):
        if self.queue or self.processing:
            raise RuntimeError("the drain would block: a vector never asks that")
        self.shutting_down = True


class Ring:
    """A FIFO ring with client-go's capacity laws: it doubles when a write
    finds it full (16 from 0); the shrinking ring returns to its normal size
    when a read leaves it empty."""

    def __init__(self, initial, normal=None):
        self.cap = max(initial, 0)
        self.normal = normal
        self.items = []

    def write(self, v):
        if len(self.items) == self.cap:
            self.cap = 16 if self.cap == 0 else 2 * self.cap
        self.items.append(v)

    def read(self):
        if self.items:
            v, ok = self.items.pop(0), True
        else:
            v, ok = "", False
        if self.normal is not None and not self.items and self.cap > self.normal:
            self.cap = self.normal
        return v, ok


class Mismatch(Exception):
    pass


def expect(step, field, got):
    want = step["want"][field]
    if want != got:
        raise Mismatch("%s: %s = %r, want %r" % (step["op"], field, got, want))


def replay_workqueue(header, steps):
    q = Queue()
    for s in steps:
        op = s["op"]
        if op == "Add":
            q.add(s["key"])
        elif op == "Done":
            q.done(s["key"])
        elif op == "Get":
            key, shutdown = q.get()
            expect(s, "key", key)
            expect(s, "shutdown", shutdown)
        elif op == "Len":
            expect(s, "n", q.length())
        elif op == "ShutDown":
            q.shut_down()
        elif op == "ShutDownWithDrain":
            q.shut_down_with_drain()
        elif op == "ShuttingDown":
            expect(s, "flag", q.shutting_down)
        else:
            raise Mismatch("unknown operation %r" % op)


def replay_ring(header, steps):
    params = header.get("params", {})
    normal = int(params["normal"]) if header["profile"] == "shrinking" else None
    r = Ring(int(params.get("initial", 0)), normal)
    for s in steps:
        op = s["op"]
        if op == "Write":
            r.write(s["value"])
        elif op == "Read":
            v, ok = r.read()
            expect(s, "value", v)
            expect(s, "ok", ok)
        elif op == "Len":
            expect(s, "n", len(r.items))
        elif op == "Cap":
            expect(s, "n", r.cap)
        else:
            raise Mismatch("unknown operation %r" % op)


REPLAYERS = {"workqueue": replay_workqueue, "ring": replay_ring}


def read_vectors(path):
    """Yields (line, header, steps); raises ValueError naming the line."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        try:
            header = json.loads(lines[i])
        except ValueError as e:
            raise ValueError("%s:%d: %s" % (path, i + 1, e))
        if header.get("format") != FORMAT:
            raise ValueError("%s:%d: format %r, want %r" % (path, i + 1, header.get("format"), FORMAT))
        n = header["steps"]
        if i + 1 + n > len(lines):
            raise ValueError("%s:%d: truncated: %d steps promised" % (path, i + 1, n))
        steps = [json.loads(l) for l in lines[i + 1 : i + 1 + n]]
        yield i + 1, header, steps
        i += 1 + n


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "traces", "vectors", "data")
    total = 0
    for component, replay in sorted(REPLAYERS.items()):
        path = os.path.join(data, component + ".jsonl")
        count, steps_total = 0, 0
        try:
            for line, header, steps in read_vectors(path):
                try:
                    replay(header, steps)
                except (Mismatch, RuntimeError, KeyError) as e:
                    print("FAIL %s: vector at line %d (seed %d, %s): %s" % (path, line, header["seed"], header["check"], e))
                    return 1
                count += 1
                steps_total += len(steps)
        except (ValueError, OSError) as e:
            print("malformed: %s" % e)
            return 2
        print("%s: %d vectors, %d steps replayed" % (component, count, steps_total))
        total += count
    print("ok: %d vectors" % total)
    return 0


if __name__ == "__main__":
    sys.exit(main())

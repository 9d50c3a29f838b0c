package checkkit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// The watchdog tells a check's goroutines from the rest of the process by
// a profiler label: the check's goroutine carries checkLabel, every
// goroutine it starts inherits it (the runtime copies labels to a new
// goroutine), and goroutines a timer starts inside one of its synctest
// bubbles belong to it through the bubble. Goroutines that earlier checks
// or subjects left behind carry another label or none, so they neither
// hide a hang nor pass for one.
const checkLabel = "kverify-check"

// labelTracebacks makes the runtime print goroutine labels in stack dumps
// (GODEBUG tracebacklabels=1, which the runtime rereads when GODEBUG is
// set), once per process. A GODEBUG that sets tracebacklabels itself is
// left alone: the watchdog then sees no labels and treats every goroutine
// outside the harness as the check's.
var labelTracebacks = sync.OnceFunc(func() {
	cur := os.Getenv("GODEBUG")
	if strings.Contains(cur, "tracebacklabels=") {
		return
	}
	if cur != "" {
		cur += ","
	}
	os.Setenv("GODEBUG", cur+"tracebacklabels=1")
})

// grt is one goroutine of a stack dump.
type grt struct {
	id      string
	state   string // the wait reason or scheduling state, without its qualifiers
	durable bool   // blocked in a way synctest.Wait counts as idle
	bubble  string // the synctest bubble's number, "" outside any
	label   string // the value of checkLabel, "" without one
	text    string // the whole entry: header and frames
}

// active reports whether the goroutine is running or wants a CPU (or is in
// a system call): a check with such a goroutine is working or waiting for
// a core, never deadlocked.
func (g grt) active() bool {
	for _, s := range []string{"running", "runnable", "syscall", "preempted", "copystack"} {
		if strings.HasPrefix(g.state, s) {
			return true
		}
	}
	return false
}

// parseDump splits a runtime.Stack(all) dump into goroutines.
func parseDump(dump string) []grt {
	var out []grt
	for _, entry := range strings.Split(strings.TrimSpace(dump), "\n\n") {
		header, _, _ := strings.Cut(entry, "\n")
		rest, ok := strings.CutPrefix(header, "goroutine ")
		if !ok {
			continue
		}
		id, rest, _ := strings.Cut(rest, " ")
		open := strings.IndexByte(rest, '[')
		end := strings.LastIndex(rest, "]:")
		if open < 0 || end < open {
			continue
		}
		g := grt{id: id, text: entry}
		inner := rest[open+1 : end]
		if i := strings.Index(inner, " labels:{"); i >= 0 {
			g.label = labelValue(inner[i:], checkLabel)
			inner = inner[:i]
		}
		parts := strings.Split(inner, ", ")
		g.state = parts[0]
		g.durable = strings.Contains(g.state, "(durable)")
		for _, p := range parts[1:] {
			if b, ok := strings.CutPrefix(p, "synctest bubble "); ok {
				g.bubble = b
			}
		}
		out = append(out, g)
	}
	return out
}

// labelValue finds key's value in a printed label set
// ( labels:{"k": "v", ...}).
func labelValue(labels, key string) string {
	_, after, ok := strings.Cut(labels, strconv.Quote(key)+": ")
	if !ok {
		return ""
	}
	v, err := strconv.QuotedPrefix(after)
	if err != nil {
		return ""
	}
	v, _ = strconv.Unquote(v)
	return v
}

// owned keeps the goroutines of the check labelled label: those carrying
// the label and every goroutine of a synctest bubble that one of those is
// in. If no goroutine carries it (labels are not printed), it keeps every
// goroutine that runs code outside the standard library and the harness.
func owned(gs []grt, label string) []grt {
	bubbles := map[string]bool{}
	found := false
	for _, g := range gs {
		if g.label == label {
			found = true
			if g.bubble != "" {
				bubbles[g.bubble] = true
			}
		}
	}
	var out []grt
	for _, g := range gs {
		if (found && (g.label == label || bubbles[g.bubble] && g.bubble != "")) || (!found && relevant(g.text)) {
			out = append(out, g)
		}
	}
	return out
}

// unquiescent finds a synctest bubble that has a goroutine in synctest.Wait
// and another goroutine that is not durably blocked (running, runnable, or
// waiting for a mutex), and returns its number; busy reports whether one of
// those goroutines is active.
func unquiescent(gs []grt) (bubble string, busy, ok bool) {
	waiting := map[string]bool{}
	stirring := map[string]bool{}
	running := map[string]bool{}
	for _, g := range gs {
		if g.bubble == "" {
			continue
		}
		switch {
		case strings.HasPrefix(g.state, "synctest.Wait"):
			waiting[g.bubble] = true
		case g.active():
			stirring[g.bubble], running[g.bubble] = true, true
		case !g.durable:
			stirring[g.bubble] = true
		}
	}
	best := ""
	for b := range waiting {
		if stirring[b] && (best == "" || running[b] && !running[best] || running[b] == running[best] && b < best) {
			best = b
		}
	}
	return best, running[best], best != ""
}

// anyActive reports whether one of gs is active.
func anyActive(gs []grt) bool {
	for _, g := range gs {
		if g.active() {
			return true
		}
	}
	return false
}

// joinEntries puts goroutines back into dump form.
func joinEntries(gs []grt) string {
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = g.text
	}
	return strings.Join(parts, "\n\n")
}

// BubbleStacks returns the first lines of the stack of every goroutine of
// the caller's synctest bubble but the caller (at most 40 goroutines, 11
// lines each), for a violation that says where a call that does not
// return waits.
func BubbleStacks() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 || !strings.Contains(strings.SplitN(g, "\n", 2)[0], "synctest bubble") {
			continue
		}
		lines := strings.Split(g, "\n")
		out = append(out, "\t"+strings.Join(lines[:min(len(lines), 11)], "\n\t"))
	}
	return strings.Join(out[:min(len(out), 40)], "\n")
}

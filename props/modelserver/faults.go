package modelserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// Fault is what the server does to one request. A check gives the server a
// schedule of faults, one per List or Watch request in the order they come;
// requests past the schedule are served healthy.
type Fault struct {
	// Refuse fails the request with connection refused.
	Refuse bool `json:",omitempty"`
	// Reject, if not 0, fails the request with this HTTP status (410, 429,
	// 500, 504).
	Reject int32 `json:",omitempty"`
	// Stale, for a read that may be stale ("0", not-older-than), serves the
	// snapshot this many versions back (clamped to what is allowed).
	Stale int64 `json:",omitempty"`
	// IgnoreLimit serves a list whole.
	IgnoreLimit bool `json:",omitempty"`
	// Reverse sends a watch's synthetic initial ADDED events in reverse key
	// order (not the order of their versions).
	Reverse bool `json:",omitempty"`
	// Ends ends a watch stream after EndAfter events, with an ERROR event
	// of EndStatus if it is not 0, else by closing it.
	Ends      bool  `json:",omitempty"`
	EndAfter  int   `json:",omitempty"`
	EndStatus int32 `json:",omitempty"`
	// EndAfterSync (with Ends) ends a watch-list stream right after its
	// end bookmark instead of after EndAfter events.
	EndAfterSync bool `json:",omitempty"`
	// DropEndBookmark: a watch-list stream never sends its end bookmark.
	DropEndBookmark bool `json:",omitempty"`
	// Malform delivers events malformed.
	Malform []apiserver.Malformed `json:",omitempty"`
	// Slow delays every event of a watch stream by this much.
	Slow time.Duration `json:",omitempty"`
	// NoTimeout: the stream ignores the request's TimeoutSeconds and stays
	// open until stopped (a server that never closes it).
	NoTimeout bool `json:",omitempty"`
	// TooLarge fails the request with "too large resource version".
	TooLarge bool `json:",omitempty"`
	// BlankRV: a list answers with resourceVersion "" (a server that does
	// not version its lists), so the reflector watches from "";
	// ZeroRV: with "0", so it watches from "0".
	BlankRV bool `json:",omitempty"`
	ZeroRV  bool `json:",omitempty"`
	// Gone: the request's 410 (Reject or EndStatus) carries the reason
	// Gone, as Kubernetes 1.17 servers answered, not Expired.
	Gone bool `json:",omitempty"`
	// InitialBookmarks puts un-annotated BOOKMARKs among a watch-list
	// stream's initial events, after this many of them each
	// (apiserver.WatchChoice.InitialBookmarks).
	InitialBookmarks []int `json:",omitempty"`
	// Hold: the server does not answer the request (a LIST or a WATCH)
	// until the test calls Release or Close; meanwhile the request honours
	// its context as a real HTTP client does, returning the context's error
	// at once when it ends. The answer, once released, is served from the
	// server's state then (a slow server, a relist in flight).
	Hold bool `json:",omitempty"`
	// HoldStop (for a WATCH): the stream ends when the client stops it,
	// but the client's Stop does not return until Release or Close (a
	// connection whose teardown blocks). Stop has no context, so a
	// reflector is inside it until released, and so is a Run that waits
	// for its reflector.
	HoldStop bool `json:",omitempty"`
}

// String lists what the fault does ("healthy" for nothing), as traces
// and check messages show a schedule.
func (f Fault) String() string {
	var parts []string
	add := func(ok bool, s string) {
		if ok {
			parts = append(parts, s)
		}
	}
	add(f.Refuse, "refuse")
	add(f.Reject != 0, fmt.Sprintf("reject=%d", f.Reject))
	add(f.Stale != 0, fmt.Sprintf("stale=%d", f.Stale))
	add(f.IgnoreLimit, "ignore-limit")
	add(f.Reverse, "reverse")
	add(f.Ends && !f.EndAfterSync, fmt.Sprintf("end-after=%d/%d", f.EndAfter, f.EndStatus))
	add(f.Ends && f.EndAfterSync, fmt.Sprintf("end-after-sync/%d", f.EndStatus))
	add(f.DropEndBookmark, "drop-end-bookmark")
	add(len(f.Malform) > 0, fmt.Sprintf("malform=%v", f.Malform))
	add(f.Slow != 0, fmt.Sprintf("slow=%v", f.Slow))
	add(f.NoTimeout, "no-timeout")
	add(f.BlankRV, "blank-rv")
	add(f.ZeroRV, "zero-rv")
	add(f.TooLarge, "too-large")
	add(f.Gone, "gone")
	add(len(f.InitialBookmarks) > 0, fmt.Sprintf("initial-bookmarks=%v", f.InitialBookmarks))
	add(f.Hold, "hold")
	add(f.HoldStop, "hold-stop")
	if len(parts) == 0 {
		return "healthy"
	}
	return fmt.Sprint(parts)
}

// reject is the status of a rejected request.
func reject(code int32) *metav1.Status {
	if code == 0 {
		return nil
	}
	return apiserver.Status(code)
}

// reject is the status of a request rejected, or a stream ended, with
// code under f: a 410 is Gone rather than Expired if f.Gone.
func (f Fault) reject(code int32) *metav1.Status {
	if code == http.StatusGone && f.Gone {
		return apiserver.Gone()
	}
	return reject(code)
}

// FaultGen draws one request's fault for a check of something built on a
// reflector (the reflector's assembled informer, the controller's checks):
// every fault of reflector/machine's schedules but malformed events, and
// the unasked answers a real server may give (Gone reasons, bookmarks
// among initial events).
func FaultGen() *rapid.Generator[Fault] { return faultGen(false) }

// MalformingFaultGen is FaultGen with malformed events among the faults
// (reflector/machine's and reflector/malformed's schedules).
func MalformingFaultGen() *rapid.Generator[Fault] { return faultGen(true) }

// faultGen draws one request's fault; malformed events only with malform.
// Besides the faults, it gives the answers a real server may give
// unasked (issue 27, class 10): periodic bookmarks among a watch-list's
// initial events (a quarter of the faults carry them), 410 as Gone (a
// 1.17 server), 504 and too-large versions, a watch-list that closes or
// fails right after its end bookmark. props/reflector's TestReachAnswers
// measures what they reach.
func faultGen(malform bool) *rapid.Generator[Fault] {
	return rapid.Custom(func(t *rapid.T) Fault {
		f := drawFault(t, malform)
		if f.Reject == 410 || f.EndStatus == 410 {
			f.Gone = rapid.Bool().Draw(t, "gone")
		}
		if rapid.IntRange(0, 3).Draw(t, "initial-bookmarks?") == 0 {
			f.InitialBookmarks = rapid.SliceOfN(rapid.IntRange(0, 6), 1, 3).Draw(t, "initial-bookmarks")
		}
		return f
	})
}

// endStatuses are the ends of a stream: a close, or an ERROR.
var endStatuses = []int32{0, 410, 429, 500, 504}

func drawFault(t *rapid.T, malform bool) Fault {
	switch rapid.IntRange(0, 14).Draw(t, "fault") {
	case 1:
		return Fault{Refuse: true}
	case 2:
		return Fault{Reject: rapid.SampledFrom([]int32{429, 500, 504, 410}).Draw(t, "status")}
	case 3:
		return Fault{Stale: rapid.Int64Range(1, 6).Draw(t, "stale"), Reverse: rapid.Bool().Draw(t, "reverse")}
	case 4:
		return Fault{IgnoreLimit: true}
	case 5:
		return Fault{Reverse: true}
	case 6:
		return Fault{Ends: true, EndAfter: rapid.IntRange(0, 4).Draw(t, "after"),
			EndStatus: rapid.SampledFrom(endStatuses).Draw(t, "end-status")}
	case 7:
		return Fault{DropEndBookmark: true}
	case 8:
		return Fault{Slow: time.Duration(rapid.IntRange(1, 3).Draw(t, "slow")) * time.Second}
	case 9:
		return Fault{Ends: true} // closes at once: a very short watch
	case 10:
		if malform {
			return Fault{Malform: []apiserver.Malformed{{Index: rapid.IntRange(0, 4).Draw(t, "index"),
				How: apiserver.Malformation(rapid.IntRange(0, 3).Draw(t, "how"))}}}
		}
		return Fault{Stale: 2}
	case 11:
		return Fault{Ends: true, EndAfter: rapid.IntRange(1, 3).Draw(t, "after"), DropEndBookmark: true}
	case 12:
		return Fault{TooLarge: true} // the version is ahead of the server
	case 13:
		// A watch-list's stream closes, or fails, right after its end
		// bookmark (a plain watch is not ended by it).
		return Fault{Ends: true, EndAfterSync: true, EndStatus: rapid.SampledFrom(endStatuses).Draw(t, "end-status")}
	case 14:
		// A watch-list's initial events come slowly, so that the
		// reflector is seen mid-stream.
		return Fault{Slow: time.Second, InitialBookmarks: []int{rapid.IntRange(0, 3).Draw(t, "initial-bookmark")}}
	}
	return Fault{}
}

// DecodeFaults turns bytes into a fault schedule; every byte string is a
// valid one. Byte 0 mod 9 is the number of faults, each of the next 3
// bytes (kind, two parameters; malformed events included); bytes past the
// end read as 0. A schedule of n faults takes 1+3n bytes, so what follows
// it starts there.
func DecodeFaults(data []byte) []Fault {
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	var faults []Fault
	n := int(at(0)) % 9
	for i := 1; len(faults) < n; i += 3 {
		faults = append(faults, decodeFault(at(i), at(i+1), at(i+2)))
	}
	return faults
}

func decodeFault(k, p, q byte) Fault {
	switch k % 12 {
	case 1:
		return Fault{Refuse: true}
	case 2:
		return Fault{Reject: []int32{429, 500, 504, 410}[p%4]}
	case 3:
		return Fault{Stale: 1 + int64(p%6), Reverse: q&1 != 0}
	case 4:
		return Fault{IgnoreLimit: true}
	case 5:
		return Fault{Reverse: true}
	case 6:
		return Fault{Ends: true, EndAfter: int(p % 5), EndStatus: []int32{0, 410, 429, 500}[q%4]}
	case 7:
		return Fault{DropEndBookmark: true}
	case 8:
		return Fault{Slow: time.Duration(1+p%3) * time.Second}
	case 9:
		return Fault{Ends: true}
	case 10:
		return Fault{Malform: []apiserver.Malformed{{Index: int(p % 5), How: apiserver.Malformation(q % 4)}}}
	case 11:
		return Fault{TooLarge: true}
	}
	return Fault{}
}

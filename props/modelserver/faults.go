package modelserver

import (
	"time"

	"github.com/kverify/kverify/spec/apiserver"
	"pgregory.net/rapid"
)

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

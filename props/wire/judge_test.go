package wire_test

import (
	"encoding/hex"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/subjects/ours"
)

// TestJudgeLeftStream plays the schedule a CI run found, and the one rapid
// shrank it to: the first watch-list stream's fourth initial event is of
// another kind, its end bookmark follows, the next request is refused,
// and o000 is deleted before the client syncs again. Ours leaves the
// stream at the malformed event (MalformedEventError), so its first sync
// is the later one, without o000; whether the server had written the end
// bookmark before the client left depends on the scheduler (half of the
// plays). A judge that holds the client to a bookmark it never took fails
// about one play in two, so each schedule is played 20 times.
func TestJudgeLeftStream(t *testing.T) {
	for _, schedule := range []string{"0400ff4608d101f6010003ff0001046182", "0400024608d101ff0001046182"} {
		data, err := hex.DecodeString(schedule)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			run := wire.Play(t, checkkit.NewRecorder(nil), ours.Wire(), wire.Decode(data))
			if err := wire.Judge(run); err != nil {
				t.Fatalf("kverify serve --schedule %s: %v", schedule, err)
			}
		}
	}
}

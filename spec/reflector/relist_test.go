package reflector

import "testing"

func TestAllowed(t *testing.T) {
	for _, c := range []struct {
		e    Ending
		want Next
	}{
		{Ending{}, Relist},
		{Ending{Request: List, Cause: Listed}, Rewatch},
		{Ending{Request: List, Cause: Listed, StoreFailed: true}, Either},
		{Ending{Request: List, Cause: Paged}, Relist},
		{Ending{Request: List, Cause: Expired}, Relist},
		{Ending{Request: List, Cause: Refused}, Relist},
		{Ending{Request: WatchList, Cause: Closed}, Relist},
		{Ending{Request: WatchList, Cause: Throttled}, Relist},
		{Ending{Request: WatchList, Synced: true, Cause: Closed}, Rewatch},
		{Ending{Request: WatchList, Synced: true, Cause: Expired}, Relist},
		{Ending{Request: Watch, Cause: Refused}, Rewatch},
		{Ending{Request: Watch, Cause: Throttled}, Rewatch},
		{Ending{Request: Watch, Cause: Closed}, Rewatch},
		{Ending{Request: Watch, Cause: Short}, Relist},
		{Ending{Request: Watch, Cause: Expired}, Relist},
		{Ending{Request: Watch, Cause: TooLarge}, Relist},
		{Ending{Request: Watch, Cause: Failed}, Relist},
		{Ending{Request: Watch, Cause: Internal}, Relist},
		{Ending{Request: Watch, Cause: Internal, InternalRetry: true}, Either},
		{Ending{Request: Watch, Cause: Malformed}, Either},
		{Ending{Request: Watch, Cause: StoppedOpen}, Either},
		{Ending{Request: Watch, Cause: Closed, StoreFailed: true}, Either},
	} {
		if got := Allowed(c.e); got != c.want {
			t.Errorf("Allowed(%v) = %v, want %v", c.e, got, c.want)
		}
	}
	if Of(List) != Relist || Of(WatchList) != Relist || Of(Watch) != Rewatch {
		t.Error("Of: a LIST and a watch-list are relists, a WATCH a re-watch")
	}
}

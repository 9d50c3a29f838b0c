package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// history builds the server every table starts from:
//
//	rv 2 create ns/b   rv 3 create a    rv 4 update ns/b   rv 5 progress
//	rv 6 create ns/c   rv 7 delete a    rv 8 create ns/a
//
// State at 8 (current): ns/a@8 ns/b@4 ns/c@6, whose key order is not its
// RV order. State at 3: a@3 ns/b@2. State at 5: a@3 ns/b@4.
func history(t *testing.T, cfg Config) *Server {
	t.Helper()
	s := New(cfg)
	must := func(_ int64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Create("ns/b"))
	must(s.Create("a"))
	must(s.Update("ns/b"))
	s.Progress()
	must(s.Create("ns/c"))
	must(s.Delete("a"))
	must(s.Create("ns/a"))
	if s.RV() != 8 {
		t.Fatalf("history ends at %d", s.RV())
	}
	return s
}

func key(m metav1.Object) string {
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func items(l *metav1.PartialObjectMetadataList) string {
	var out []string
	for i := range l.Items {
		out = append(out, key(&l.Items[i])+"@"+l.Items[i].ResourceVersion)
	}
	return strings.Join(out, " ")
}

func show(e watch.Event) string {
	switch o := e.Object.(type) {
	case nil:
		return string(e.Type) + " <nil>"
	case *metav1.Status:
		return fmt.Sprintf("%s %d", e.Type, o.Code)
	case *unstructured.Unstructured:
		return fmt.Sprintf("%s unstructured %s@%s", e.Type, key(o), o.GetResourceVersion())
	case *metav1.PartialObjectMetadata:
		if e.Type == watch.Bookmark {
			s := fmt.Sprintf("%s @%s", e.Type, o.ResourceVersion)
			if o.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
				s += " end"
			}
			return s
		}
		return fmt.Sprintf("%s %s@%s", e.Type, key(o), o.ResourceVersion)
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

func shows(evs []watch.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, show(e))
	}
	return strings.Join(out, ", ")
}

// errKind names an error the way the reflector classifies it.
func errKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrBadChoice):
		return "bad-choice"
	case errors.Is(err, ErrUnsupported):
		return "unsupported"
	case utilnet.IsConnectionRefused(err):
		return "refused"
	case apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge):
		return "too-large"
	case apierrors.IsResourceExpired(err):
		return "expired"
	case apierrors.IsInvalid(err):
		return "invalid"
	case apierrors.IsBadRequest(err):
		return "bad-request"
	case code(err) == http.StatusInternalServerError:
		return "500"
	case apierrors.IsTooManyRequests(err):
		return "429"
	}
	return "other: " + err.Error()
}

func ptr[T any](v T) *T { return &v }

// code is the HTTP status an API error carries (0 for another error).
func code(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

func TestWrites(t *testing.T) {
	s := New(Config{})
	if s.RV() != 1 || s.Compacted() != 0 {
		t.Fatalf("new server at %d compacted %d", s.RV(), s.Compacted())
	}
	for _, k := range []string{"", "/a", "a/", "a/b/c", "ns/"} {
		if _, err := s.Create(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Create(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if rv, err := s.Create("x"); rv != 2 || err != nil {
		t.Fatalf("Create = %d, %v", rv, err)
	}
	if _, err := s.Create("x"); !errors.Is(err, ErrConflict) {
		t.Errorf("second Create = %v", err)
	}
	if _, err := s.Update("y"); !errors.Is(err, ErrConflict) {
		t.Errorf("Update missing = %v", err)
	}
	if _, err := s.Delete("y"); !errors.Is(err, ErrConflict) {
		t.Errorf("Delete missing = %v", err)
	}
	if rv := s.Progress(); rv != 3 {
		t.Errorf("Progress = %d", rv)
	}
	if rv, _ := s.Update("x"); rv != 4 {
		t.Errorf("Update = %d", rv)
	}
	if rv, _ := s.Delete("x"); rv != 5 {
		t.Errorf("Delete = %d", rv)
	}
	if err := s.Compact(6); err == nil {
		t.Error("Compact ahead of the server accepted")
	}
	if err := s.Compact(3); err != nil {
		t.Fatal(err)
	}
	if err := s.Compact(2); err == nil {
		t.Error("Compact backwards accepted")
	}
	// Snapshots ignore compaction.
	for rv, want := range map[int64]string{1: "", 2: "x@2", 3: "x@2", 4: "x@4", 5: ""} {
		objs, err := s.Snapshot(rv)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("Snapshot(%d) = %v, want %q", rv, got, want)
		}
	}
	for _, rv := range []int64{0, 6} {
		if _, err := s.Snapshot(rv); err == nil {
			t.Errorf("Snapshot(%d) accepted", rv)
		}
	}
}

func TestList(t *testing.T) {
	const now = "ns/a@8 ns/b@4 ns/c@6"
	tests := []struct {
		name    string
		compact int64
		opts    metav1.ListOptions
		choice  ListChoice
		want    string // items
		rv      string
		err     string
	}{
		{name: "most recent", opts: metav1.ListOptions{}, want: now, rv: "8"},
		{name: "most recent never stale", choice: ListChoice{At: 3}, err: "bad-choice"},
		{name: "any is current", opts: metav1.ListOptions{ResourceVersion: "0"}, want: now, rv: "8"},
		{name: "any stale", opts: metav1.ListOptions{ResourceVersion: "0"}, choice: ListChoice{At: 3}, want: "a@3 ns/b@2", rv: "3"},
		{name: "any stale past compaction", compact: 6, opts: metav1.ListOptions{ResourceVersion: "0"}, choice: ListChoice{At: 3}, want: "a@3 ns/b@2", rv: "3"},
		{name: "any stale out of range", opts: metav1.ListOptions{ResourceVersion: "0"}, choice: ListChoice{At: 9}, err: "bad-choice"},
		{name: "any with NotOlderThan", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, want: now, rv: "8"},
		{name: "not older than, legacy", opts: metav1.ListOptions{ResourceVersion: "3"}, want: now, rv: "8"},
		{name: "not older than", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, want: now, rv: "8"},
		{name: "not older than, stale", opts: metav1.ListOptions{ResourceVersion: "3"}, choice: ListChoice{At: 5}, want: "a@3 ns/b@4", rv: "5"},
		{name: "not older than, too stale", opts: metav1.ListOptions{ResourceVersion: "5"}, choice: ListChoice{At: 3}, err: "bad-choice"},
		{name: "not older than a compacted RV", compact: 6, opts: metav1.ListOptions{ResourceVersion: "3"}, want: now, rv: "8"},
		{name: "exact", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want: "a@3 ns/b@2", rv: "3"},
		{name: "exact at a progress RV", opts: metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want: "a@3 ns/b@4", rv: "5"},
		{name: "exact at the compaction point", compact: 5, opts: metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want: "a@3 ns/b@4", rv: "5"},
		{name: "exact compacted", compact: 6, opts: metav1.ListOptions{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, err: "expired"},
		{name: "exact by limit", opts: metav1.ListOptions{ResourceVersion: "3", Limit: 10}, want: "a@3 ns/b@2", rv: "3"},
		{name: "exact by limit compacted", compact: 6, opts: metav1.ListOptions{ResourceVersion: "3", Limit: 10}, err: "expired"},
		{name: "exact stale choice", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, choice: ListChoice{At: 4}, err: "bad-choice"},
		{name: "too large", opts: metav1.ListOptions{ResourceVersion: "9"}, err: "too-large"},
		{name: "too large, NotOlderThan", opts: metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, err: "too-large"},
		{name: "too large, exact", opts: metav1.ListOptions{ResourceVersion: "9", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, err: "too-large"},
		{name: "too large, paged", opts: metav1.ListOptions{ResourceVersion: "9", Limit: 1}, err: "too-large"},
		{name: "exact with 0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, err: "invalid"},
		{name: "match without RV", opts: metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, err: "invalid"},
		{name: "unknown match", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: "Newest"}, err: "invalid"},
		{name: "sendInitialEvents on a list", opts: metav1.ListOptions{SendInitialEvents: ptr(true)}, err: "invalid"},
		{name: "RV not a number", opts: metav1.ListOptions{ResourceVersion: "x"}, err: "bad-request"},
		{name: "RV negative", opts: metav1.ListOptions{ResourceVersion: "-3"}, err: "bad-request"},
		{name: "selector", opts: metav1.ListOptions{LabelSelector: "a=b"}, err: "unsupported"},
		{name: "refused", choice: ListChoice{Refuse: true}, err: "refused"},
		{name: "rejected", choice: ListChoice{Reject: Status(429)}, err: "429"},
		{name: "limit ignored", opts: metav1.ListOptions{ResourceVersion: "0", Limit: 1}, choice: ListChoice{IgnoreLimit: true}, want: now, rv: "8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := history(t, Config{})
			if tt.compact != 0 {
				if err := s.Compact(tt.compact); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.List(tt.opts, tt.choice)
			if got := errKind(err); got != tt.err {
				t.Fatalf("error %q (%v), want %q", got, err, tt.err)
			}
			if err != nil {
				if l != nil {
					t.Errorf("list %v with error", l)
				}
				return
			}
			if got := items(l); got != tt.want || l.ResourceVersion != tt.rv {
				t.Errorf("list @%s %q, want @%s %q", l.ResourceVersion, got, tt.rv, tt.want)
			}
			if l.Continue != "" || l.RemainingItemCount != nil {
				t.Errorf("unpaged list has continue %q, remaining %v", l.Continue, l.RemainingItemCount)
			}
			if objs, err := meta.ExtractList(l); err != nil || len(objs) != len(l.Items) {
				t.Errorf("ExtractList: %d, %v", len(objs), err)
			}
		})
	}
}

func TestTooLargeIsRecognised(t *testing.T) {
	err := TooLarge(9, 8)
	if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) || !apierrors.IsTimeout(err) ||
		!strings.Contains(err.ErrStatus.Message, "Too large resource version") ||
		err.ErrStatus.Details.Causes[0].Message != "Too large resource version" {
		t.Errorf("TooLarge = %#v", err.ErrStatus)
	}
	if e := TooOld(3, 5); !apierrors.IsResourceExpired(e) || e.ErrStatus.Code != 410 {
		t.Errorf("TooOld = %#v", e.ErrStatus)
	}
	for code, is := range map[int32]func(error) bool{
		410: apierrors.IsResourceExpired,
		429: apierrors.IsTooManyRequests,
		500: apierrors.IsInternalError,
		504: apierrors.IsTimeout,
		503: apierrors.IsServiceUnavailable,
	} {
		st := Status(code)
		if err := apierrors.FromObject(st); st.Code != code || !is(err) {
			t.Errorf("Status(%d) = %#v", code, st)
		}
	}
	if !utilnet.IsConnectionRefused(ConnectionRefused()) {
		t.Error("ConnectionRefused not recognised")
	}
}

// pages lists with limit from opts until no continue token is left,
// writing between pages, and returns every page's items and RV.
func pages(t *testing.T, s *Server, opts metav1.ListOptions, between func()) []string {
	t.Helper()
	var out []string
	for i := 0; i < 10; i++ {
		l, err := s.List(opts, ListChoice{})
		if err != nil {
			t.Fatalf("page %d: %v", i, err)
		}
		rem := "-"
		if l.RemainingItemCount != nil {
			rem = fmt.Sprint(*l.RemainingItemCount)
		}
		out = append(out, fmt.Sprintf("%s @%s rem %s", items(l), l.ResourceVersion, rem))
		if l.Continue == "" {
			return out
		}
		opts = metav1.ListOptions{Limit: opts.Limit, Continue: l.Continue}
		between()
	}
	t.Fatal("no last page")
	return nil
}

func TestPaging(t *testing.T) {
	s := New(Config{})
	for _, k := range []string{"e", "d", "c", "b", "a"} {
		if _, err := s.Create(k); err != nil {
			t.Fatal(err)
		}
	}
	// Writes between pages are not seen: each page is the first page's snapshot.
	n := 0
	write := func() {
		n++
		_, _ = s.Update("e")
		_, _ = s.Delete("a")
		_, _ = s.Create(fmt.Sprintf("z%d", n))
	}
	got := pages(t, s, metav1.ListOptions{Limit: 2}, write)
	want := []string{"a@6 b@5 @6 rem 3", "c@4 d@3 @6 rem 1", "e@2 @6 rem -"}
	if !slices.Equal(got, want) {
		t.Errorf("pages %q, want %q", got, want)
	}
	// Now: b@5 c@4 d@3 e@10 z1@9 z2@11 at 11. A limit of exactly the size
	// needs no continue token; RV "0" pages too.
	l, err := s.List(metav1.ListOptions{ResourceVersion: "0", Limit: 6}, ListChoice{})
	if err != nil || l.Continue != "" || items(l) != "b@5 c@4 d@3 e@10 z1@9 z2@11" || l.ResourceVersion != "11" {
		t.Fatalf("limit = size: %v, %v", l, err)
	}
	l, err = s.List(metav1.ListOptions{ResourceVersion: "0", Limit: 4}, ListChoice{At: 6})
	if err != nil || l.Continue == "" || l.ResourceVersion != "6" || items(l) != "a@6 b@5 c@4 d@3" {
		t.Fatalf("stale paged: %v, %v", l, err)
	}
	tok := l.Continue

	// Continue requests: RV "" or "0" only; no match; a valid token.
	for _, tc := range []struct {
		name string
		opts metav1.ListOptions
		err  string
	}{
		{"with RV 0", metav1.ListOptions{ResourceVersion: "0", Continue: tok}, ""},
		{"with RV n", metav1.ListOptions{ResourceVersion: "6", Continue: tok}, "bad-request"},
		{"with a match", metav1.ListOptions{ResourceVersion: "6", ResourceVersionMatch: metav1.ResourceVersionMatchExact, Continue: tok}, "invalid"},
		{"garbage token", metav1.ListOptions{Continue: "%%%"}, "bad-request"},
		{"token without key", metav1.ListOptions{Continue: encodeContinue(6, "")}, "bad-request"},
		{"token ahead", metav1.ListOptions{Continue: encodeContinue(99, "a")}, "bad-request"},
	} {
		l, err := s.List(tc.opts, ListChoice{})
		if got := errKind(err); got != tc.err {
			t.Errorf("%s: error %q (%v), want %q", tc.name, got, err, tc.err)
		}
		if err == nil && (items(l) != "e@2" || l.ResourceVersion != "6") {
			t.Errorf("%s: %s @%s", tc.name, items(l), l.ResourceVersion)
		}
	}
	if _, err := s.List(metav1.ListOptions{Continue: tok}, ListChoice{At: 6}); !errors.Is(err, ErrBadChoice) {
		t.Errorf("stale continue: %v", err)
	}

	// A compacted snapshot: Expired, with a token that continues after the
	// same key at the latest RV.
	if err := s.Compact(7); err != nil {
		t.Fatal(err)
	}
	_, err = s.List(metav1.ListOptions{Limit: 4, Continue: tok}, ListChoice{})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("compacted token: %v", err)
	}
	next := err.(*apierrors.StatusError).ErrStatus.ListMeta.Continue
	if next == "" {
		t.Fatal("no continue token in the Expired error")
	}
	l, err = s.List(metav1.ListOptions{Limit: 1, Continue: next}, ListChoice{})
	if err != nil || items(l) != "e@10" || l.ResourceVersion != "11" || l.Continue == "" {
		t.Fatalf("inconsistent continuation: %v, %v", l, err)
	}
	l, err = s.List(metav1.ListOptions{Limit: 10, Continue: l.Continue}, ListChoice{})
	if err != nil || items(l) != "z1@9 z2@11" || l.ResourceVersion != "11" || l.Continue != "" {
		t.Fatalf("inconsistent continuation, page 2: %v, %v", l, err)
	}
}

// The order of every list and page is the key order, and paging a snapshot
// at any page size gives the unpaged list.
func TestPagingConcatenates(t *testing.T) {
	s := history(t, Config{})
	for rv := int64(1); rv <= s.RV(); rv++ {
		one, err := s.List(metav1.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, ListChoice{})
		if err != nil {
			t.Fatal(err)
		}
		for limit := int64(1); limit <= 4; limit++ {
			var all []string
			opts := metav1.ListOptions{ResourceVersion: fmt.Sprint(rv), Limit: limit}
			for {
				l, err := s.List(opts, ListChoice{})
				if err != nil {
					t.Fatal(err)
				}
				if l.ResourceVersion != fmt.Sprint(rv) {
					t.Fatalf("page at %s, want %d", l.ResourceVersion, rv)
				}
				if it := items(l); it != "" {
					all = append(all, it)
				}
				if l.Continue == "" {
					break
				}
				opts = metav1.ListOptions{Limit: limit, Continue: l.Continue}
			}
			if got := strings.Join(all, " "); got != items(one) {
				t.Errorf("rv %d limit %d: %q, want %q", rv, limit, got, items(one))
			}
		}
	}
}

func TestWatch(t *testing.T) {
	nolist := Config{NoWatchList: true}
	nto := metav1.ResourceVersionMatchNotOlderThan
	// after runs on the server once the watch is open.
	live := func(s *Server) {
		_, _ = s.Update("ns/c") // 9
		s.Bookmark()            // @9
		s.Progress()            // 10
		s.Bookmark()            // @10
		_, _ = s.Delete("ns/a") // 11
	}
	const liveEvents = "MODIFIED ns/c@9, DELETED ns/a@11"
	const liveBookmarks = "MODIFIED ns/c@9, BOOKMARK @9, BOOKMARK @10, DELETED ns/a@11"
	const initial = "ADDED ns/a@8, ADDED ns/b@4, ADDED ns/c@6"
	tests := []struct {
		name    string
		cfg     Config
		compact int64
		opts    metav1.ListOptions
		choice  WatchChoice
		err     string
		want    string
		closed  bool
	}{
		// Resume from an RV: replay in RV order, then live events.
		{name: "replay", opts: metav1.ListOptions{ResourceVersion: "3"},
			want: "MODIFIED ns/b@4, ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "replay from a progress RV", opts: metav1.ListOptions{ResourceVersion: "5"},
			want: "ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "replay with bookmarks", opts: metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true},
			want: "ADDED ns/a@8, " + liveBookmarks},
		{name: "replay from the compaction point", compact: 7, opts: metav1.ListOptions{ResourceVersion: "7"},
			want: "ADDED ns/a@8, " + liveEvents},
		{name: "replay compacted", compact: 7, opts: metav1.ListOptions{ResourceVersion: "6"},
			want: "ERROR 410", closed: true},
		{name: "replay from the current RV", opts: metav1.ListOptions{ResourceVersion: "8", AllowWatchBookmarks: true},
			want: liveBookmarks},
		{name: "from a future RV waits", opts: metav1.ListOptions{ResourceVersion: "10", AllowWatchBookmarks: true},
			want: "DELETED ns/a@11"},
		{name: "stale choice for an exact start", opts: metav1.ListOptions{ResourceVersion: "3"}, choice: WatchChoice{At: 4}, err: "bad-choice"},

		// Watch-list (and the gate's defaulting of "" and "0").
		{name: "watch-list", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			want: initial + ", BOOKMARK @8 end, " + liveBookmarks},
		{name: "watch-list without bookmarks", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto},
			want: initial + ", " + liveEvents},
		{name: "watch-list with bookmarks among the initial events", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			choice: WatchChoice{InitialBookmarks: []int{0, 2, 9}},
			want:   "BOOKMARK @8, ADDED ns/a@8, ADDED ns/b@4, BOOKMARK @8, ADDED ns/c@6, BOOKMARK @8, BOOKMARK @8 end, " + liveBookmarks},
		{name: "watch-list ended right after its end bookmark", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			choice: WatchChoice{Faults: Faults{End: &End{After: 1, AfterSync: true, Status: Status(410)}}},
			want:   initial + ", BOOKMARK @8 end, ERROR 410", closed: true},
		{name: "no bookmarks among the initial events of a legacy watch", cfg: Config{NoWatchList: true}, opts: metav1.ListOptions{AllowWatchBookmarks: true},
			choice: WatchChoice{InitialBookmarks: []int{1}},
			want:   initial + ", " + liveBookmarks},
		{name: "defaulted from \"\"", opts: metav1.ListOptions{AllowWatchBookmarks: true},
			want: initial + ", BOOKMARK @8 end, " + liveBookmarks},
		{name: "defaulted from \"0\", stale", opts: metav1.ListOptions{ResourceVersion: "0", AllowWatchBookmarks: true}, choice: WatchChoice{At: 3},
			want: "ADDED a@3, ADDED ns/b@2, BOOKMARK @3 end, MODIFIED ns/b@4, ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveBookmarks},
		{name: "defaulted without bookmarks", opts: metav1.ListOptions{},
			want: initial + ", " + liveEvents},
		{name: "watch-list not older than n", opts: metav1.ListOptions{ResourceVersion: "3", SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			want: initial + ", BOOKMARK @8 end, " + liveBookmarks},
		{name: "watch-list not older than n, stale", opts: metav1.ListOptions{ResourceVersion: "3", SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true}, choice: WatchChoice{At: 5},
			want: "ADDED a@3, ADDED ns/b@4, BOOKMARK @5 end, ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveBookmarks},
		{name: "watch-list not older than a compacted n", compact: 7, opts: metav1.ListOptions{ResourceVersion: "3", SendInitialEvents: ptr(true), ResourceVersionMatch: nto},
			want: initial + ", " + liveEvents},
		{name: "watch-list too stale", opts: metav1.ListOptions{ResourceVersion: "5", SendInitialEvents: ptr(true), ResourceVersionMatch: nto}, choice: WatchChoice{At: 4}, err: "bad-choice"},
		{name: "watch-list consistent never stale", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto}, choice: WatchChoice{At: 4}, err: "bad-choice"},
		{name: "watch-list too large", opts: metav1.ListOptions{ResourceVersion: "9", SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			want: "ERROR 504", closed: true},
		{name: "watch-list in key order, not RV order", opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto}, choice: WatchChoice{Order: []string{"ns/c", "gone", "ns/a", "ns/c"}},
			want: "ADDED ns/c@6, ADDED ns/a@8, ADDED ns/b@4, " + liveEvents},
		{name: "sendInitialEvents=false from \"\"", opts: metav1.ListOptions{SendInitialEvents: ptr(false), ResourceVersionMatch: nto, AllowWatchBookmarks: true},
			want: liveBookmarks},
		{name: "sendInitialEvents=false from \"0\", stale", opts: metav1.ListOptions{ResourceVersion: "0", SendInitialEvents: ptr(false), ResourceVersionMatch: nto}, choice: WatchChoice{At: 6},
			want: "DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "sendInitialEvents=false from n", opts: metav1.ListOptions{ResourceVersion: "6", SendInitialEvents: ptr(false), ResourceVersionMatch: nto},
			want: "DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "sendInitialEvents without a match", opts: metav1.ListOptions{SendInitialEvents: ptr(true)}, err: "invalid"},
		{name: "match without sendInitialEvents", opts: metav1.ListOptions{ResourceVersion: "3", ResourceVersionMatch: nto}, err: "invalid"},
		{name: "RV not a number", opts: metav1.ListOptions{ResourceVersion: "x"}, err: "500"}, // the watch cache's Invalid error, unconverted: see badWatchRV,
		{name: "selector", opts: metav1.ListOptions{FieldSelector: "metadata.name=a"}, err: "unsupported"},

		// A server without watch-list.
		{name: "no watch-list: refused", cfg: nolist, opts: metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: nto, AllowWatchBookmarks: true}, err: "invalid"},
		{name: "no watch-list: legacy \"\" never ends its initial events", cfg: nolist, opts: metav1.ListOptions{AllowWatchBookmarks: true},
			want: initial + ", " + liveBookmarks},
		{name: "no watch-list: legacy \"0\", stale, ordered", cfg: nolist, opts: metav1.ListOptions{ResourceVersion: "0"}, choice: WatchChoice{At: 5, Order: []string{"ns/b"}},
			want: "ADDED ns/b@4, ADDED a@3, ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "no watch-list: legacy \"\", stale", cfg: nolist, opts: metav1.ListOptions{}, choice: WatchChoice{At: 3},
			want: "ADDED a@3, ADDED ns/b@2, MODIFIED ns/b@4, ADDED ns/c@6, DELETED a@7, ADDED ns/a@8, " + liveEvents},
		{name: "no watch-list: replay", cfg: nolist, opts: metav1.ListOptions{ResourceVersion: "7"},
			want: "ADDED ns/a@8, " + liveEvents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := history(t, tt.cfg)
			s.Bookmark() // due before the watch: never delivered
			if tt.compact != 0 {
				if err := s.Compact(tt.compact); err != nil {
					t.Fatal(err)
				}
			}
			w, err := s.Watch(tt.opts, tt.choice)
			if got := errKind(err); got != tt.err {
				t.Fatalf("error %q (%v), want %q", got, err, tt.err)
			}
			if err != nil {
				if w != nil {
					t.Error("watch with an error")
				}
				return
			}
			before, _ := w.Events()
			live(s)
			evs, closed := w.Events()
			if got := shows(evs); got != tt.want || closed != tt.closed {
				t.Errorf("events\n %s (closed %t), want\n %s (closed %t)", got, closed, tt.want, tt.closed)
			}
			if !slices.Equal(before, evs[:len(before)]) {
				t.Error("events before the writes are not a prefix")
			}
			for _, e := range evs {
				if st, ok := e.Object.(*metav1.Status); ok {
					if err := apierrors.FromObject(st); e.Type != watch.Error || errKind(err) == "" {
						t.Errorf("status %v in a %s event", st, e.Type)
					}
				}
			}
		})
	}
}

// An ERROR event in the stream carries the errors the reflector classifies.
func TestWatchStreamErrors(t *testing.T) {
	s := history(t, Config{})
	_ = s.Compact(7)
	w, _ := s.Watch(metav1.ListOptions{ResourceVersion: "6"}, WatchChoice{})
	evs, _ := w.Events()
	if err := apierrors.FromObject(evs[0].Object); errKind(err) != "expired" || !strings.Contains(err.Error(), "too old resource version: 6 (7)") {
		t.Errorf("compacted watch: %v", err)
	}
	w, _ = s.Watch(metav1.ListOptions{ResourceVersion: "9", SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, WatchChoice{})
	evs, _ = w.Events()
	if err := apierrors.FromObject(evs[0].Object); errKind(err) != "too-large" {
		t.Errorf("too-large watch-list: %v", err)
	}
}

func TestWatchFaults(t *testing.T) {
	wl := metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	resume := metav1.ListOptions{ResourceVersion: "6", AllowWatchBookmarks: true}
	live := func(s *Server) {
		_, _ = s.Update("ns/c") // 9
		s.Bookmark()            // @9
		_, _ = s.Delete("ns/a") // 10
	}
	const initial = "ADDED ns/a@8, ADDED ns/b@4, ADDED ns/c@6"
	tests := []struct {
		name   string
		opts   metav1.ListOptions
		faults Faults
		want   string
		closed bool
		err    string
	}{
		{name: "none", opts: wl, want: initial + ", BOOKMARK @8 end, MODIFIED ns/c@9, BOOKMARK @9, DELETED ns/a@10"},
		{name: "close at once", opts: wl, faults: Faults{End: &End{}}, want: "", closed: true},
		{name: "close after 2", opts: wl, faults: Faults{End: &End{After: 2}}, want: "ADDED ns/a@8, ADDED ns/b@4", closed: true},
		{name: "close after the end bookmark", opts: wl, faults: Faults{End: &End{After: 4}}, want: initial + ", BOOKMARK @8 end", closed: true},
		{name: "close after a live event", opts: resume, faults: Faults{End: &End{After: 3}}, want: "DELETED a@7, ADDED ns/a@8, MODIFIED ns/c@9", closed: true},
		{name: "410 after 1", opts: resume, faults: Faults{End: &End{After: 1, Status: Status(410)}}, want: "DELETED a@7, ERROR 410", closed: true},
		{name: "429 at once", opts: resume, faults: Faults{End: &End{Status: Status(429)}}, want: "ERROR 429", closed: true},
		{name: "500 after the initial events", opts: wl, faults: Faults{End: &End{After: 3, Status: Status(500)}}, want: initial + ", ERROR 500", closed: true},
		{name: "no end bookmark", opts: wl, faults: Faults{DropEndBookmark: true}, want: initial + ", MODIFIED ns/c@9, DELETED ns/a@10"},
		{name: "no end bookmark on a legacy stream is moot", opts: resume, faults: Faults{DropEndBookmark: true}, want: "DELETED a@7, ADDED ns/a@8, MODIFIED ns/c@9, BOOKMARK @9, DELETED ns/a@10"},
		{name: "malformed", opts: wl, faults: Faults{Malform: []Malformed{{0, NilObject}, {1, WrongType}, {3, NoRV}, {4, BadRV}, {5, WrongType}}},
			want: "ADDED <nil>, ADDED unstructured ns/b@4, ADDED ns/c@6, BOOKMARK @ end, MODIFIED ns/c@not-a-number, BOOKMARK unstructured @9, DELETED ns/a@10"},
		{name: "malformed counts after the dropped bookmark", opts: wl, faults: Faults{DropEndBookmark: true, Malform: []Malformed{{3, NilObject}}, End: &End{After: 4}},
			want: initial + ", MODIFIED <nil>", closed: true},
		{name: "malformed error event", opts: resume, faults: Faults{Malform: []Malformed{{0, NoRV}, {1, NilObject}}, End: &End{After: 1, Status: Status(410)}},
			want: "DELETED a@, ERROR 410", closed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := history(t, Config{})
			w, err := s.Watch(tt.opts, WatchChoice{Faults: tt.faults})
			if err != nil {
				t.Fatal(err)
			}
			live(s)
			evs, closed := w.Events()
			if got := shows(evs); got != tt.want || closed != tt.closed {
				t.Errorf("events\n %s (closed %t), want\n %s (closed %t)", got, closed, tt.want, tt.closed)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		s := history(t, Config{})
		if _, err := s.Watch(wl, WatchChoice{Refuse: true}); errKind(err) != "refused" {
			t.Errorf("refused watch: %v", err)
		}
		if _, err := s.Watch(wl, WatchChoice{Reject: Status(429)}); errKind(err) != "429" {
			t.Errorf("rejected watch: %v", err)
		}
		if _, err := s.List(metav1.ListOptions{}, ListChoice{Refuse: true}); errKind(err) != "refused" {
			t.Errorf("refused list: %v", err)
		}
	})
}

func TestStopAndRecorder(t *testing.T) {
	s := history(t, Config{})
	opts := metav1.ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true, TimeoutSeconds: ptr(int64(300))}
	w1, err := s.Watch(opts, WatchChoice{})
	if err != nil {
		t.Fatal(err)
	}
	*opts.TimeoutSeconds = 1 // the recorder holds a copy
	_, _ = s.Update("ns/b")  // 9
	w1.Stop()
	_, _ = s.Update("ns/b") // 10: after the Stop
	w1.Stop()
	evs, closed := w1.Events()
	if got := shows(evs); got != "ADDED ns/a@8, MODIFIED ns/b@9" || !closed {
		t.Errorf("stopped watch: %s (closed %t)", got, closed)
	}
	_, _ = s.List(metav1.ListOptions{ResourceVersion: "99"}, ListChoice{})
	_, _ = s.Watch(metav1.ListOptions{SendInitialEvents: ptr(true)}, WatchChoice{})
	w2, _ := s.Watch(metav1.ListOptions{}, WatchChoice{})
	w2.Stop()
	if w1.ID() != 1 || w2.ID() != 2 {
		t.Errorf("IDs %d %d", w1.ID(), w2.ID())
	}
	var got []string
	for _, c := range s.Calls() {
		s := fmt.Sprintf("%s#%d rv=%q", c.Kind, c.Watch, c.Options.ResourceVersion)
		if c.Options.TimeoutSeconds != nil {
			s += fmt.Sprintf(" t=%d", *c.Options.TimeoutSeconds)
		}
		if c.Options.SendInitialEvents != nil {
			s += " sie" // as sent: the server's defaulting is not recorded
		}
		if c.Err != nil {
			s += " " + errKind(c.Err)
		}
		got = append(got, s)
	}
	want := []string{
		`Watch#1 rv="7" t=300`, `Stop#1 rv=""`, `Stop#1 rv=""`,
		`List#0 rv="99" too-large`, `Watch#0 rv="" sie invalid`, `Watch#2 rv=""`, `Stop#2 rv=""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls\n %q, want\n %q", got, want)
	}
}

// A list at any RV the server still has, followed by a watch from the
// list's RV, reconstructs the current state; so does a watch-list stream up
// to its end bookmark followed by its live events.
func TestListThenWatchConverges(t *testing.T) {
	s := history(t, Config{})
	state := map[string]string{}
	apply := func(evs []watch.Event) {
		for _, e := range evs {
			m := e.Object.(*metav1.PartialObjectMetadata)
			switch e.Type {
			case watch.Added, watch.Modified:
				state[key(m)] = m.ResourceVersion
			case watch.Deleted:
				delete(state, key(m))
			}
		}
	}
	current := func() string {
		objs, _ := s.Snapshot(s.RV())
		var out []string
		for _, o := range objs {
			if state[o.Key] != fmt.Sprint(o.RV) {
				return "mismatch at " + o.Key
			}
			out = append(out, o.String())
		}
		if len(state) != len(objs) {
			return "ghost objects"
		}
		return strings.Join(out, " ")
	}
	for rv := int64(1); rv <= 8; rv++ {
		clear(state)
		l, err := s.List(metav1.ListOptions{ResourceVersion: fmt.Sprint(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact}, ListChoice{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			state[key(&l.Items[i])] = l.Items[i].ResourceVersion
		}
		w, _ := s.Watch(metav1.ListOptions{ResourceVersion: l.ResourceVersion}, WatchChoice{})
		evs, _ := w.Events()
		apply(evs)
		if got := current(); strings.HasPrefix(got, "mismatch") || got == "ghost objects" {
			t.Errorf("list at %d + watch: %s", rv, got)
		}
	}
}

package reflector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/traces"
)

// Schedule is one run of a reflector against the model server, fixed in
// advance: the server's configuration, the reflector's, the fault schedule
// and the history. Decode makes one from any byte string, for fuzzing.
type Schedule struct {
	ServerWatchList bool
	WatchList       bool
	PageSize        int64
	Objects         int
	Faults          []modelserver.Fault
	// Seed seeds the reflector's randomness (watch timeouts, jitter).
	Seed uint64
	Ops  []Op
}

func (sc Schedule) String() string {
	return fmt.Sprintf("server watch-list=%v, reflector watch-list=%v, page size %d, %d objects, faults %v, %d steps",
		sc.ServerWatchList, sc.WatchList, sc.PageSize, sc.Objects, sc.Faults, len(sc.Ops))
}

// Decode turns bytes into a schedule; every byte string is a valid one.
// Byte 0: bit 0 server watch-list, bit 1 reflector watch-list, bits 2-3
// page size (0, 0, 1, 3), bit 4 past the page limit (501-532 objects, else
// byte 1 mod 11). Byte 2 mod 9 faults of 3 bytes each (kind, two
// parameters, malformed events included). Each later byte is one step: the
// low 3 bits the kind (create/update/delete of key high&7, progress,
// bookmark, compact, or advance by one of 1s, 10s, 65s, 400s).
func Decode(data []byte) Schedule {
	at := func(i int) byte {
		if i < len(data) {
			return data[i]
		}
		return 0
	}
	b := at(0)
	sc := Schedule{ServerWatchList: b&1 != 0, WatchList: b&2 != 0, PageSize: []int64{0, 0, 1, 3}[(b>>2)&3]}
	sc.Objects = int(at(1)) % 11
	if b&16 != 0 {
		sc.Objects, sc.PageSize = 501+int(at(1))%32, 0
	}
	sc.Faults = modelserver.DecodeFaults(data[min(2, len(data)):])
	for i := 3 + 3*len(sc.Faults); i < len(data) && len(sc.Ops) < 64; i++ {
		c := data[i]
		op := Op{Kind: opKind(c & 7), Key: int(c>>3) & 7}
		if op.Kind == opAdvance {
			op.Advance = advances[(c>>3)&3]
		}
		sc.Ops = append(sc.Ops, op)
	}
	return sc
}

// Without returns sc without the features c declares absent (a listing
// reflector without watch-list, no page size without paging): the nearest
// schedule a subject with c can run, e.g. for a fuzz target over Decode.
func (sc Schedule) Without(c Capabilities) Schedule {
	if c.NoWatchList {
		sc.WatchList = false
	}
	if c.NoPaging {
		sc.PageSize = 0
	}
	return sc
}

// RunSchedule runs sc on s in a synctest bubble with the machine's
// invariants at every quiescent point, convergence once the faults are
// spent, and every watch stopped; it returns the first violation, with the
// trace Replay takes. A schedule that needs a feature s declares absent is
// not run: RunSchedule returns an error that says so (see
// Schedule.Without).
func RunSchedule(t *testing.T, cfg checkkit.Config, s Subject, sc Schedule) error {
	if f := s.Capabilities.lacking(Setup{WatchList: sc.WatchList, PageSize: sc.PageSize}); f != "" {
		return fmt.Errorf("reflector: the schedule (%s) needs %s, which the subject declares absent (%s)", sc, f, s.Capabilities)
	}
	return checkkit.Scenario(t, cfg, sc.String(), func(rec *checkkit.Recorder) error {
		i := 0
		play(nil, rec, s, sc, func(*world, []string) (Op, bool) {
			if i == len(sc.Ops) {
				return Op{}, false
			}
			i++
			return sc.Ops[i-1], true
		})
		return nil
	})
}

// Replay runs a saved trace of one of the reflector checks on s. A trace of
// reflector/machine or reflector/malformed whose first step holds a
// schedule is played again exactly (the schedule, its seed and its ops);
// any other trace runs its check again (the fixed scenarios are
// deterministic; for a rapid check, the seed in the trace's message
// reproduces the run with -rapid.seed).
func Replay(t *testing.T, s Subject, tr *traces.Trace) error {
	if len(tr.Steps) > 0 && strings.HasPrefix(tr.Steps[0].Want, schedulePrefix) {
		var sc Schedule
		if err := json.Unmarshal([]byte(strings.TrimPrefix(tr.Steps[0].Want, schedulePrefix)), &sc); err != nil {
			return fmt.Errorf("reflector: trace's schedule: %w", err)
		}
		for _, st := range tr.Steps[1:] {
			op, err := parseOp(st.Op)
			if err != nil {
				return err
			}
			sc.Ops = append(sc.Ops, op)
		}
		return RunSchedule(t, checkkit.Config{}, s, sc)
	}
	for _, c := range Checks(s) {
		if c.Name == tr.Check && c.NotOffered != "" {
			return fmt.Errorf("reflector: %s is not offered to the subject: %s", c.Name, c.NotOffered)
		}
		if c.Name == tr.Check {
			return c.Run(t, checkkit.Config{})
		}
	}
	return fmt.Errorf("reflector: no replay for check %q", tr.Check)
}

// parseOp reads an op's notation ("create default/o003", "update ...",
// "delete ...", "progress", "bookmark", "compact", "advance 1m5s").
func parseOp(s string) (Op, error) {
	verb, arg, _ := strings.Cut(s, " ")
	switch verb {
	case "create", "update", "delete":
		var n int
		if _, err := fmt.Sscanf(arg, "default/o%03d", &n); err != nil {
			return Op{}, fmt.Errorf("reflector: op %q: %w", s, err)
		}
		kind := map[string]opKind{"create": opCreate, "update": opUpdate, "delete": opDelete}[verb]
		return Op{Kind: kind, Key: n}, nil
	case "progress":
		return Op{Kind: opProgress}, nil
	case "bookmark":
		return Op{Kind: opBookmark}, nil
	case "compact":
		return Op{Kind: opCompact}, nil
	case "advance":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return Op{}, fmt.Errorf("reflector: op %q: %w", s, err)
		}
		return Op{Kind: opAdvance, Advance: d}, nil
	}
	return Op{}, fmt.Errorf("reflector: unknown op %q", s)
}

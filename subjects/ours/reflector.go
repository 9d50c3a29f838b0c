package ours

import (
	"context"
	"fmt"

	"github.com/kverify/kverify/impl/reflector"
	"github.com/kverify/kverify/props/modelserver"
	prefl "github.com/kverify/kverify/props/reflector"
	"github.com/kverify/kverify/spec/apiserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reflector is impl/reflector as a subject, with the bubble's clock
// (the real clock under synctest).
func Reflector() prefl.Subject {
	return prefl.Subject{
		New: func(s prefl.Setup) (prefl.Reflector, error) {
			return newReflector(s.Server, s.Store, s)
		},
		BadInput: func(i int) error {
			s := prefl.Setup{}
			srv, st := modelserver.NewServer(apiserver.Config{}, nil), prefl.NewStore()
			var err error
			switch i {
			case 0:
				_, err = newReflector(nil, st, s)
			case 1:
				_, err = newReflector(srv, nil, s)
			case 2:
				s.ResyncPeriod = -1
				_, err = newReflector(srv, st, s)
			default:
				s.PageSize = -1
				_, err = newReflector(srv, st, s)
			}
			return err
		},
	}
}

// listWatchOnly is what ListWatchReflector and ListWatchAssembled lack.
var listWatchOnly = prefl.Capabilities{NoWatchList: true, NoPaging: true, NoResync: true}

// ListWatchName prefixes the list-and-watch reflector's check names
// (listwatch/reflector/machine, ...) in ours' reflector entry.
const ListWatchName = "listwatch"

// ListWatchReflector is impl/reflector reduced to a plain list-and-watch
// reflector, as most clients outside client-go are: it never streams
// (WatchListOff), lists in one request with no limit (PagingOff) and has
// no resync, and declares so (Capabilities NoWatchList, NoPaging,
// NoResync). It is strict about it: a setup that asks for watch-list, a
// page size or a resync fails its construction, so a check that asks
// for a declared-absent feature fails rather than passes.
func ListWatchReflector() prefl.Subject {
	return prefl.Subject{
		Name:         ListWatchName,
		Capabilities: listWatchOnly,
		New: func(s prefl.Setup) (prefl.Reflector, error) {
			return newListWatchReflector(s.Server, s.Store, s)
		},
		BadInput: func(i int) error {
			srv, st := modelserver.NewServer(apiserver.Config{}, nil), prefl.NewStore()
			switch i {
			case 0:
				_, err := newListWatchReflector(nil, st, prefl.Setup{})
				return err
			case 1:
				_, err := newListWatchReflector(srv, nil, prefl.Setup{})
				return err
			}
			// It takes no resync period and no page size: nothing to
			// reject, and the check must not ask.
			return nil
		},
	}
}

func newListWatchReflector(srv *modelserver.Server, st *prefl.Store, s prefl.Setup) (prefl.Reflector, error) {
	switch {
	case s.WatchList:
		return nil, fmt.Errorf("ours list-and-watch reflector: asked to stream its syncs, but it has no watch-list")
	case s.PageSize != 0:
		return nil, fmt.Errorf("ours list-and-watch reflector: asked for pages of %d, but it does not page", s.PageSize)
	case s.ResyncPeriod != 0 || s.ShouldResync != nil:
		return nil, fmt.Errorf("ours list-and-watch reflector: asked to resync, but it has no resync")
	}
	return build(srv, st, s, func(o *reflector.Options) { o.Paging = reflector.PagingOff })
}

func newReflector(srv *modelserver.Server, st *prefl.Store, s prefl.Setup) (prefl.Reflector, error) {
	return build(srv, st, s, nil)
}

// build makes impl/reflector's Reflector for the setup, with adjust (if
// not nil) applied to its options last.
func build(srv *modelserver.Server, st *prefl.Store, s prefl.Setup, adjust func(*reflector.Options)) (prefl.Reflector, error) {
	opts := reflector.Options{
		Name:                          "ours",
		ExpectedType:                  &metav1.PartialObjectMetadata{},
		ResyncPeriod:                  s.ResyncPeriod,
		ShouldResync:                  s.ShouldResync,
		WatchListPageSize:             s.PageSize,
		MaxInternalErrorRetryDuration: s.MaxInternalErrorRetryDuration,
		OnWatchError:                  s.OnError,
		Rand:                          s.Rand,
	}
	if s.Clock != nil {
		opts.Clock = s.Clock
	}
	if !s.WatchList {
		opts.WatchList = reflector.WatchListOff
	}
	if adjust != nil {
		adjust(&opts)
	}
	var lw reflector.ListerWatcher
	if srv != nil {
		lw = srv
	}
	var store reflector.Store
	if st != nil {
		store = st
	}
	r, err := reflector.New(lw, store, opts)
	if err != nil {
		return nil, err
	}
	return oursReflector{r}, nil
}

type oursReflector struct{ r *reflector.Reflector }

func (r oursReflector) Run(ctx context.Context)         { r.r.Run(ctx) }
func (r oursReflector) LastSyncResourceVersion() string { return r.r.LastSyncResourceVersion() }

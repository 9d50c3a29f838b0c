package ours

import (
	"context"

	"github.com/kverify/kverify/impl/reflector"
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
			srv, st := prefl.NewServer(apiserver.Config{}, nil), prefl.NewStore()
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

func newReflector(srv *prefl.Server, st *prefl.Store, s prefl.Setup) (prefl.Reflector, error) {
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

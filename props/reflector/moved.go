package reflector

import (
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
)

// The model API server moved to props/modelserver; these names keep a
// subject written against props/reflector building.

// Server is the model API server.
//
// Deprecated: use modelserver.Server.
type Server = modelserver.Server

// NewServer returns a model API server with the given configuration and
// fault schedule.
//
// Deprecated: use modelserver.NewServer.
func NewServer(cfg apiserver.Config, faults []Fault) *Server {
	return modelserver.NewServer(cfg, faults)
}

// Fault is what the server does to one request.
//
// Deprecated: use modelserver.Fault.
type Fault = modelserver.Fault

// NoWatchList wraps a server for a client that cannot stream initial
// events.
//
// Deprecated: use modelserver.NoWatchList.
type NoWatchList = modelserver.NoWatchList

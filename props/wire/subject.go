// Package wire serves the model API server (props/modelserver:
// spec/apiserver with its fault schedules) over HTTP, and judges clients
// that list and watch it over the wire: client-go's REST stack, ours on
// it, and clients in any language through the kverify-client/v1 protocol
// (traces/client.schema.json).
//
// The resource is ConfigMaps (core/v1, namespaced) in namespace default:
// every stock client can list and watch them without generated types or
// custom resource definitions, and the model's objects (a name, a
// namespace, a resource version) are valid ConfigMaps with no data.
package wire

import (
	"net/http"
	"time"
)

// Protocol is the client protocol's name and version.
const Protocol = "kverify-client/v1"

// Line is one line of the kverify-client/v1 protocol a client wrote
// (traces/client.schema.json).
type Line struct {
	Type      string   `json:"type"`
	Protocol  string   `json:"protocol,omitempty"`
	Client    string   `json:"client,omitempty"`
	Key       string   `json:"key,omitempty"`
	RV        string   `json:"rv,omitempty"`
	OldRV     string   `json:"oldRv,omitempty"`
	Tombstone bool     `json:"tombstone,omitempty"`
	Message   string   `json:"message,omitempty"`
	Cache     []Object `json:"cache,omitempty"`
}

// The line types.
const (
	LineHello   = "hello"
	LineAdd     = "add"
	LineUpdate  = "update"
	LineDelete  = "delete"
	LineSynced  = "synced"
	LineError   = "error"
	LineState   = "state"
	LineStopped = "stopped"
)

// Object is a cached object as a state line reports it.
type Object struct {
	Key string `json:"key"`
	RV  string `json:"rv"`
}

// Client is one running client under test.
type Client interface {
	// Lines returns every line the client has written so far, in order,
	// except state answers: hello, handler calls, synced, errors.
	Lines() []Line
	// State asks the client for its cache and the version it reports (a
	// state line).
	State() (Line, error)
	// Stop stops the client and waits for it.
	Stop() error
}

// Subject is a client under test: how to start one against a served URL.
type Subject struct {
	// Name names the subject in reports.
	Name string
	// Start starts a client that lists and watches ConfigMaps in
	// Namespace at url. In process, rt is the in-memory transport
	// (Transport) to use; for a Realtime subject rt is nil and url is a
	// loopback listener's.
	Start func(url string, rt http.RoundTripper) (Client, error)
	// Realtime subjects run in real time (a process): they are not put in
	// a synctest bubble, their schedules are played Realtime, and they
	// run Schedules schedules (0: 6) instead of the in-process count.
	Realtime  bool
	Schedules int
	// SingleShot declares a client that does not reconnect: one list,
	// one watch from its version, and it is done when the server ends
	// either (a failed request, a stream closed, cut, or ended by an
	// ERROR event) or sends an event it cannot apply (a malformed one).
	// kubectl get -w is such a client. Versions, handler consistency,
	// the initial adds, request shapes and rates are owed as from any
	// client; convergence is owed only while the shot lasts: once the
	// server has ended it (and the client made no request after), the
	// cache and the handlers' view must hold the server's state at the
	// last version the shot was sent before its end (its complete
	// list's, or its stream's last event's before any malformed event
	// or ERROR), nothing if none, and synced is not owed. A single-shot
	// client may report its end as an error line; the judge does not
	// rely on it (Shot reads the server's records).
	SingleShot bool
	// TLS serves a Realtime subject over https (httptest's self-signed
	// certificate; the client must skip verifying it), for a client that
	// speaks nothing else: @kubernetes/client-node 1.0.0-rc6 makes an
	// https agent whatever the URL's scheme.
	TLS bool
}

// Bounds are the numbers the checks state.
const (
	// recoverFake is how long an in-process client may take, in fake
	// time after the last step of a schedule, to converge: past
	// client-go's 30s backoff cap and its 10-minute bound on a watch-list
	// stream without its end bookmark.
	recoverFake = 15 * time.Minute
	// stallCost is what each stalling fault of a schedule (a missing end
	// bookmark, a slow stream, a stream without a timeout) adds to
	// recoverFake: one watch timeout (client-go's is at most 10 minutes)
	// and a minute.
	stallCost = 11 * time.Minute
	// recoverReal is the same bound for a real-time client, whose
	// schedules are played with waits of at most 300ms, plus
	// recoverRealPerFault for each fault of its schedule (a client backs
	// off after each).
	recoverReal         = 20 * time.Second
	recoverRealPerFault = 2 * time.Second
	// maxPerSecond and maxPerSchedule bound the requests of one client:
	// any one-second window, and a whole schedule with its recovery.
	// Beyond maxPerSchedule the server holds every request (a tight loop
	// then blocks instead of spinning the test).
	maxPerSecond   = 10
	maxPerSchedule = 400
	// inProcessSchedules is how many random schedules wire/schedules runs
	// on an in-process subject per round.
	inProcessSchedules = 1000
	// shotQuietFake and shotQuietReal are how long a single-shot
	// client's ended shot must see no request before its state is taken
	// as final: past client-go's retries (a Retry-After of 1s, at most
	// 10 of them) in fake time; past one retry's wait in real time.
	shotQuietFake = time.Minute
	shotQuietReal = 3 * time.Second
)

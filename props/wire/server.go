package wire

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternal "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Namespace is the one namespace served; Resource the one resource.
const (
	Namespace = "default"
	Resource  = "configmaps"
)

// Request is one HTTP request the server answered, as recorded.
type Request struct {
	// Seq numbers requests from 1 in the order they arrived; At is when
	// (the synctest bubble's fake time for in-process runs).
	Seq int       `json:"seq"`
	At  time.Time `json:"at"`
	// Order places the request's start among every request and every
	// version the server sent (Server.Sent), in the order they happened.
	Order int `json:"order"`
	// Verb is list, watch, get, discovery or bad (a request answered
	// with an error status before reaching the model).
	Verb  string `json:"verb"`
	Path  string `json:"path"`
	Query string `json:"query,omitempty"`
	// Options are the list options decoded from the query (list, watch).
	Options metav1.ListOptions `json:"options,omitzero"`
	// Code is the HTTP status answered; 0 for a refused request (the
	// connection closed without an answer).
	Code int `json:"code"`
	// Reason is the answer's Status reason, for an error.
	Reason metav1.StatusReason `json:"reason,omitempty"`
	// RV and Continue are a list answer's resourceVersion and continue
	// token.
	RV       string `json:"rv,omitempty"`
	Continue string `json:"continue,omitempty"`
	// Items is how many objects a list answered.
	Items int `json:"items,omitempty"`
	// Events are a watch's events as written to the wire ("ADDED 7",
	// "BOOKMARK 9 end", "ERROR 410"); Cut reports that the server cut the
	// stream (Restart) rather than ending it.
	Events []string `json:"events,omitempty"`
	Cut    bool     `json:"cut,omitempty"`
	// Ended reports that the server closed the stream (its timeout, a
	// fault's end, the model's close at the end of a run), as opposed to
	// the client closing it or a Cut.
	Ended bool `json:"ended,omitempty"`
	// Malformed are the events of Events that were malformed (no
	// object, another kind, a version that is not a number).
	Malformed []string `json:"malformed,omitempty"`
}

// Server is the HTTP face of a props/modelserver model server. It is an
// http.Handler: serve it on a listener (kverify serve) or through
// Transport, in memory, inside a synctest bubble.
type Server struct {
	model *modelserver.Server
	mu    sync.Mutex
	log   []Request
	cuts  map[int]chan struct{} // open watches by Seq, closed by Restart
	// order counts requests' starts and versions sent; sent are the
	// versions sent.
	order int
	sent  []Sent
	bytes atomic.Int64 // of answers written
	// Limit, if not 0 and set before serving, is the number of requests
	// answered: later ones are held until the client gives up on them
	// (recorded with verb "held"), so that a client in a tight loop blocks
	// instead of spinning.
	Limit int
	// WholeAtZero, if set before serving, serves a LIST from version "0"
	// whole whatever its limit, as kube-apiserver's watch cache does
	// (the realapi recordings; spec/apiserver.Run's choice).
	WholeAtZero bool
	// OnRequest, if set before serving, is called with each request's
	// record when its answer ends (kverify serve's log).
	OnRequest func(Request)
}

// NewServer serves model over HTTP.
func NewServer(model *modelserver.Server) *Server {
	return &Server{model: model, cuts: map[int]chan struct{}{}}
}

// Bytes is how many bytes of answers (bodies) the server has written.
func (s *Server) Bytes() int64 { return s.bytes.Load() }

// Model returns the model server behind s (writes, oracle reads).
func (s *Server) Model() *modelserver.Server { return s.model }

// Requests returns every request answered or being answered, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, r := range s.log {
		r.Events = append([]string(nil), r.Events...)
		out[i] = r
	}
	return out
}

func (s *Server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.log)
}

// Restart plays a server restart: every open watch is cut (its connection
// closed mid-stream, without an ERROR event) and the history is compacted
// to the current version, as after an etcd compaction while the server was
// down.
func (s *Server) Restart() {
	s.mu.Lock()
	for seq, c := range s.cuts {
		close(c)
		delete(s.cuts, seq)
	}
	s.mu.Unlock()
	s.model.Compact()
}

// start records a request; the caller defers finish(seq).
func (s *Server) start(r *http.Request, verb string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order++
	s.log = append(s.log, Request{Seq: len(s.log) + 1, Order: s.order, At: time.Now(), Verb: verb, Path: r.URL.Path, Query: r.URL.RawQuery})
	return len(s.log)
}

// Sent is a version the server sent to a client: a list answer's, or a
// watch event's object's (bookmarks included, ERROR events not), with
// its place in the server's order and the request that sent it.
type Sent struct {
	Order int    `json:"order"`
	Seq   int    `json:"seq"`
	RV    string `json:"rv"`
}

// sentVersions returns every version sent so far, in order.
func (s *Server) sentVersions() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sent(nil), s.sent...)
}

// send records that the request seq sent version rv.
func (s *Server) send(seq int, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order++
	s.sent = append(s.sent, Sent{Order: s.order, Seq: seq, RV: rv})
}

// finish hands the request's record to OnRequest.
func (s *Server) finish(seq int) {
	if s.OnRequest == nil {
		return
	}
	s.mu.Lock()
	r := s.log[seq-1]
	r.Events = append([]string(nil), r.Events...)
	s.mu.Unlock()
	s.OnRequest(r)
}

func (s *Server) update(seq int, f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.log[seq-1])
}

// ServeHTTP answers discovery (/version, /api, /api/v1, /apis), and GET
// list, watch and get of ConfigMaps in namespace default (also listed and
// watched cluster-wide, /api/v1/configmaps, since every object is in
// default). Anything else gets the Status a kube-apiserver would send:
// 404 NotFound, 405 MethodNotAllowed, 400 BadRequest for a query it cannot
// decode, the model's 400 and 422 for invalid options.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.Limit > 0 && s.count() >= s.Limit {
		seq := s.start(r, "held")
		defer s.finish(seq)
		<-r.Context().Done()
		panic(http.ErrAbortHandler)
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	if body, ok := discovery(path); ok {
		seq := s.start(r, "discovery")
		defer s.finish(seq)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		s.update(seq, func(q *Request) { q.Code = http.StatusOK })
		return
	}
	name, watchPath, ok := route(path)
	if !ok {
		seq := s.start(r, "bad")
		defer s.finish(seq)
		s.fail(w, seq, apierrors.NewNotFound(schema.GroupResource{Resource: "the requested resource"}, ""),
			"kverify serve answers list, watch and get of configmaps in namespace "+Namespace+" only")
		return
	}
	if r.Method != http.MethodGet {
		seq := s.start(r, "bad")
		defer s.finish(seq)
		s.fail(w, seq, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: Resource}, strings.ToLower(r.Method)), "")
		return
	}
	if !acceptsJSON(r.Header.Values("Accept")) {
		seq := s.start(r, "bad")
		defer s.finish(seq)
		s.fail(w, seq, apierrors.NewGenericServerResponse(http.StatusNotAcceptable, "get", schema.GroupResource{Resource: Resource}, "",
			"only the following media types are accepted: application/json", 0, false), "")
		return
	}
	if name != "" {
		s.get(w, r, name)
		return
	}
	opts, err := decodeOptions(r)
	verb := "list"
	if watchPath || opts.Watch {
		verb = "watch"
	}
	seq := s.start(r, verb)
	defer s.finish(seq)
	s.update(seq, func(q *Request) { q.Options = opts })
	if err != nil {
		s.update(seq, func(q *Request) { q.Verb = "bad" })
		s.fail(w, seq, err, "")
		return
	}
	if verb == "watch" {
		s.watch(w, r, seq, opts)
		return
	}
	s.list(w, r, seq, opts)
}

// acceptsJSON reports whether an Accept header (absent, or any of its
// media ranges) admits application/json: the only encoding served, where
// kube-apiserver also serves YAML, protobuf and CBOR and answers 406 for
// what it cannot.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, mt := range strings.Split(v, ",") {
			mt, _, _ = strings.Cut(strings.TrimSpace(mt), ";")
			switch strings.TrimSpace(mt) {
			case "", "*/*", "application/*", "application/json":
				return true
			}
		}
	}
	return false
}

// route splits a ConfigMap path into the object's name ("" for the
// collection) and whether it is the legacy /watch/ path.
func route(path string) (name string, watchPath, ok bool) {
	rest, found := strings.CutPrefix(path, "/api/v1/")
	if !found {
		return "", false, false
	}
	if r, w := strings.CutPrefix(rest, "watch/"); w {
		rest, watchPath = r, true
	}
	if rest == Resource {
		return "", watchPath, true
	}
	rest, found = strings.CutPrefix(rest, "namespaces/"+Namespace+"/"+Resource)
	switch {
	case !found:
		return "", false, false
	case rest == "":
		return "", watchPath, true
	case strings.HasPrefix(rest, "/") && !watchPath && !strings.Contains(rest[1:], "/"):
		return rest[1:], false, true
	}
	return "", false, false
}

var parameterCodec = func() runtime.ParameterCodec {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	_ = metainternal.AddToScheme(scheme)
	return runtime.NewParameterCodec(scheme)
}()

// decodeOptions decodes the query as kube-apiserver does (unknown
// parameters are ignored); a value it cannot convert is a 400 BadRequest.
func decodeOptions(r *http.Request) (metav1.ListOptions, error) {
	var opts metav1.ListOptions
	if err := parameterCodec.DecodeParameters(r.URL.Query(), schema.GroupVersion{Version: "v1"}, &opts); err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	return opts, nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, seq int, opts metav1.ListOptions) {
	if s.WholeAtZero && opts.ResourceVersion == "0" && opts.Continue == "" {
		opts.Limit = 0
	}
	obj, err := s.model.ListWithContext(r.Context(), opts)
	if err != nil {
		s.fail(w, seq, err, "")
		return
	}
	list := obj.(*metav1.PartialObjectMetadataList)
	s.model.Model(func(m *apiserver.Server) {
		for i := range list.Items {
			setUID(m, &list.Items[i])
		}
	})
	out := configMapList{Kind: "ConfigMapList", APIVersion: "v1", Metadata: list.ListMeta, Items: make([]configMap, len(list.Items))}
	for i := range list.Items {
		out.Items[i] = asConfigMap(&list.Items[i])
	}
	s.update(seq, func(q *Request) {
		q.Code, q.RV, q.Continue, q.Items = http.StatusOK, list.ResourceVersion, list.Continue, len(list.Items)
	})
	s.send(seq, list.ResourceVersion)
	s.writeJSON(w, http.StatusOK, out)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, name string) {
	seq := s.start(r, "get")
	defer s.finish(seq)
	_, objs := s.model.Current()
	for _, o := range objs {
		if o.Key == Namespace+"/"+name {
			s.update(seq, func(q *Request) { q.Code, q.RV = http.StatusOK, strconv.FormatInt(o.RV, 10) })
			meta := o.Meta()
			s.model.Model(func(m *apiserver.Server) { setUID(m, meta) })
			s.writeJSON(w, http.StatusOK, asConfigMap(meta))
			return
		}
	}
	s.fail(w, seq, apierrors.NewNotFound(schema.GroupResource{Resource: Resource}, name), "")
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, seq int, opts metav1.ListOptions) {
	wi, err := s.model.WatchWithContext(r.Context(), opts)
	if err != nil {
		s.fail(w, seq, err, "")
		return
	}
	defer wi.Stop()
	cut := make(chan struct{})
	s.mu.Lock()
	s.cuts[seq] = cut
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.cuts, seq)
		s.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	s.update(seq, func(q *Request) { q.Code = http.StatusOK })
	flush(w)
	for {
		select {
		case e, ok := <-wi.ResultChan():
			if !ok {
				s.update(seq, func(q *Request) { q.Ended = true })
				return
			}
			if o, ok := e.Object.(*metav1.PartialObjectMetadata); ok && o.Name != "" {
				o = o.DeepCopy() // the model's event is shared with its stream
				s.model.Model(func(m *apiserver.Server) { setUID(m, o) })
				e.Object = o
			}
			line, desc, bad := encodeEvent(e)
			s.update(seq, func(q *Request) {
				q.Events = append(q.Events, desc)
				if bad {
					q.Malformed = append(q.Malformed, desc)
				}
			})
			if m, ok := e.Object.(metav1.Object); ok && e.Type != watch.Error {
				s.send(seq, m.GetResourceVersion())
			}
			s.bytes.Add(int64(len(line)))
			if _, err := w.Write(line); err != nil {
				return
			}
			flush(w)
		case <-cut:
			s.update(seq, func(q *Request) { q.Cut = true })
			panic(http.ErrAbortHandler) // the connection closes mid-stream
		case <-r.Context().Done():
			return
		}
	}
}

// fail answers err as a Status (a refusal closes the connection without an
// answer); note, if not empty, replaces the status message.
func (s *Server) fail(w http.ResponseWriter, seq int, err error, note string) {
	if isRefused(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		s.update(seq, func(q *Request) { q.Code = 0 })
		panic(http.ErrAbortHandler)
	}
	st := statusOf(err)
	if note != "" {
		st.Message = note
	}
	s.update(seq, func(q *Request) { q.Code, q.Reason = int(st.Code), st.Reason })
	if d := st.Details; d != nil && d.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	s.writeJSON(w, int(st.Code), st)
}

// statusOf is err's Status, as kube-apiserver's handlers write it: an
// APIStatus as it is, the model's unsupported selectors as 400, anything
// else as 500.
func statusOf(err error) *metav1.Status {
	var st metav1.Status
	switch a := apierrors.APIStatus(nil); {
	case errors.As(err, &a):
		st = a.Status()
	case errors.Is(err, apiserver.ErrUnsupported):
		st = apierrors.NewBadRequest(err.Error()).ErrStatus
	default:
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	return &st
}

func isRefused(err error) bool {
	return err != nil && err.Error() == apiserver.ConnectionRefused().Error()
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	s.bytes.Add(int64(len(b) + 1))
	_, _ = w.Write(append(b, '\n'))
}

package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/kverify/kverify/props/checkkit"
	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/spec/apiserver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Reader makes a script's requests over HTTP and decodes the answers: a
// LIST, and a WATCH read until the server ends the stream. The requests
// go to the cluster-wide path (/api/v1/configmaps), so that a script's
// keys may be in any namespace.
type Reader interface {
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, opts metav1.ListOptions) ([]watch.Event, error)
}

// NewReader makes a Reader for the server at url through rt.
type NewReader func(url string, rt http.RoundTripper) (Reader, error)

// RunScript drives a served model through steps (spec/apiserver's script
// notation) over HTTP, in a synctest bubble, and returns each step's
// normalised answer as spec/apiserver.Run gives the model's. Writes and
// compactions go to the model; a List or Watch is a request made by the
// reader, with the choices spec/apiserver.Run makes (a LIST from "0" is
// served whole, as the watch cache does: Server.WholeAtZero) and a watch that stays open
// ended by its timeout of one second (the quiet a reader waits for).
func RunScript(t *testing.T, steps []apiserver.Step, newReader NewReader) ([]string, error) {
	cfg := apiserver.Config{}
	if len(steps) > 0 && steps[0].Kind == apiserver.GateStep {
		cfg.NoWatchList = !steps[0].Gate
	}
	out := make([]string, len(steps))
	err := checkkit.InBubble(t, func() error {
		model := modelserver.NewServer(cfg, nil)
		defer model.Close()
		srv := NewServer(model)
		srv.WholeAtZero = true
		r, err := newReader("http://kverify.invalid", Transport(srv))
		if err != nil {
			return err
		}
		ctx := context.Background()
		prev := ""
		for i, st := range steps {
			out[i] = runStep(ctx, model, r, st, &prev)
		}
		return nil
	})
	return out, err
}

func runStep(ctx context.Context, model *modelserver.Server, r Reader, st apiserver.Step, prev *string) string {
	write := func(f func(key string) error) string {
		if err := f(st.Key); err != nil {
			return apiserver.Outcome(err)
		}
		rv, _ := model.Current()
		return fmt.Sprintf("rv=%d", rv)
	}
	switch st.Kind {
	case apiserver.GateStep:
		return fmt.Sprintf("WatchList=%t", st.Gate)
	case apiserver.CreateStep:
		return write(model.Create)
	case apiserver.UpdateStep:
		return write(model.Update)
	case apiserver.DeleteStep:
		return write(model.Delete)
	case apiserver.CompactStep:
		model.Compact()
		rv, _ := model.Current()
		return fmt.Sprintf("compacted at %d", rv)
	case apiserver.ListStep:
		opts := st.Opts
		if st.ContinuePrev {
			opts.Continue = *prev
		}
		list, err := r.List(ctx, opts)
		if err != nil {
			return apiserver.Outcome(err)
		}
		if l, err := metaList(list); err == nil {
			*prev = l
		}
		return apiserver.ListOutcome(list)
	}
	opts := st.Opts
	one := int64(1)
	opts.TimeoutSeconds = &one
	events, err := r.Watch(ctx, opts)
	if err != nil {
		return apiserver.Outcome(err)
	}
	return apiserver.WatchOutcome(events)
}

func metaList(list runtime.Object) (string, error) {
	l, ok := list.(metav1.ListInterface)
	if !ok {
		return "", fmt.Errorf("not a list: %T", list)
	}
	return l.GetContinue(), nil
}

// PlainReader decodes the server's JSON with encoding/json alone: a list
// into a PartialObjectMetadataList, watch events line by line, an error
// answer into its Status. It is what a client in another language sees.
func PlainReader(url string, rt http.RoundTripper) (Reader, error) {
	return plainReader{url: url, c: &http.Client{Transport: rt}}, nil
}

type plainReader struct {
	url string
	c   *http.Client
}

func (p plainReader) get(ctx context.Context, opts metav1.ListOptions) (*http.Response, error) {
	q, err := parameterCodec.EncodeParameters(&opts, schema.GroupVersion{Version: "v1"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/api/v1/"+Resource+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var st metav1.Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return nil, fmt.Errorf("wire: a %d answer without a Status: %w", resp.StatusCode, err)
		}
		return nil, &apierrors.StatusError{ErrStatus: st}
	}
	return resp, nil
}

func (p plainReader) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	resp, err := p.get(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var l metav1.PartialObjectMetadataList
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return nil, err
	}
	return &l, nil
}

func (p plainReader) Watch(ctx context.Context, opts metav1.ListOptions) ([]watch.Event, error) {
	opts.Watch = true
	resp, err := p.get(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var events []watch.Event
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var line struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return events, err
		}
		var obj runtime.Object = &metav1.PartialObjectMetadata{}
		if line.Type == watch.Error {
			obj = &metav1.Status{}
		}
		if err := json.Unmarshal(line.Object, obj); err != nil {
			return events, err
		}
		events = append(events, watch.Event{Type: line.Type, Object: obj})
	}
	if err := sc.Err(); err != nil && err != io.ErrUnexpectedEOF {
		return events, err
	}
	return events, nil
}

// fidelityDiffs are the declared differences between the served model
// over HTTP and the real stack's recorded answers, by scenario and step,
// with the reason. None today: every answer the recordings hold comes back
// the same over the wire.
var fidelityDiffs = map[string]map[int]string{}

// fidelity replays the real stack's recordings (spec/apiserver's
// Recordings) over HTTP with the plain reader and compares every answer.
func fidelity(t *testing.T, _ checkkit.Config) error {
	recs, err := apiserver.Recordings()
	if err != nil {
		return err
	}
	for _, rec := range recs {
		steps, err := apiserver.ParseScript(rec.Ops)
		if err != nil {
			return err
		}
		got, err := RunScript(t, steps, PlainReader)
		if err != nil {
			return err
		}
		for i := range steps {
			reason, declared := fidelityDiffs[rec.Name][i]
			switch {
			case got[i] != rec.Answers[i] && !declared:
				return checkkit.Broke(GFidelity, "scenario %s, step %d %s: the real stack answers %q, the served model %q", rec.Name, i, rec.Ops[i], rec.Answers[i], got[i])
			case got[i] == rec.Answers[i] && declared:
				return checkkit.Broke(GFidelity, "scenario %s, step %d %s: declared as a difference (%s), but the served model now answers as the real stack", rec.Name, i, rec.Ops[i], reason)
			}
		}
	}
	return nil
}

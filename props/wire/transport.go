package wire

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
)

// Transport is an http.RoundTripper that serves every request with h in
// memory: no sockets, so an in-process client and the server share a
// synctest bubble and its fake time. The handler runs in a goroutine per
// request; its response body streams through a pipe. A handler that aborts
// before answering (http.ErrAbortHandler: a refusal) is a connection
// refused; one that aborts mid-answer cuts the body (io.ErrUnexpectedEOF).
// Closing the body, or the request's context ending, ends the handler's
// request context.
func Transport(h http.Handler) http.RoundTripper { return memTransport{h} }

type memTransport struct{ h http.Handler }

func (t memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close() // GET only: the server reads no body
	}
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	rw := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:0"
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		defer func() {
			r := recover()
			switch {
			case r == nil:
				rw.WriteHeader(http.StatusOK)
				_ = pw.Close()
			case r == http.ErrAbortHandler && !rw.answered():
				rw.refuse()
			case r == http.ErrAbortHandler:
				_ = pw.CloseWithError(io.ErrUnexpectedEOF)
			default:
				_ = pw.CloseWithError(fmt.Errorf("wire: handler panicked: %v", r))
				rw.refuse()
			}
		}()
		t.h.ServeHTTP(rw, sreq)
	}()
	select {
	case <-rw.ready:
	case <-req.Context().Done():
		cancel()
		_ = pr.Close()
		return nil, req.Context().Err()
	}
	if rw.refused {
		cancel()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	// As net/http does, a request context that ends after the response
	// came back ends the response whether or not the client closes the
	// body: reads fail, and the handler's next write fails, so that it
	// returns. Without this, a handler blocked writing to a body nobody
	// reads any more stayed blocked for good.
	go func() {
		select {
		case <-req.Context().Done():
			_ = pr.CloseWithError(req.Context().Err())
		case <-ctx.Done(): // the body was closed
		case <-handled:
		}
	}()
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rw.code, http.StatusText(rw.code)), StatusCode: rw.code,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rw.header, Body: &pipeBody{pr: pr, cancel: cancel}, ContentLength: -1, Request: req,
	}, nil
}

// pipeWriter is the handler's ResponseWriter: the header goes to
// RoundTrip once (ready), the body into the pipe.
type pipeWriter struct {
	header  http.Header
	pw      *io.PipeWriter
	once    sync.Once
	ready   chan struct{}
	code    int
	refused bool
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code = code
		w.header = w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(b)
}

// Flush is a no-op: the pipe hands every write to the reader.
func (w *pipeWriter) Flush() {}

func (w *pipeWriter) answered() bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

func (w *pipeWriter) refuse() {
	w.once.Do(func() {
		w.refused = true
		close(w.ready)
	})
}

type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

func (b *pipeBody) Close() error {
	b.cancel()
	return b.pr.Close()
}

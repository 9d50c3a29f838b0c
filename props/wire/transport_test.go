package wire

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// A request whose context ends after its response was returned ends the
// response as net/http does, whether or not the client closes the body: a
// handler still writing gets an error and returns. Before, the in-memory
// transport closed the pipe only on Close, so a handler blocked writing to
// a body the client had cancelled but not closed stayed blocked, and the
// bubble ended with it ("main bubble goroutine has exited but blocked
// goroutines remain").
func TestTransportEndsOnCancelledContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		handlerDone := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(handlerDone)
			for {
				if _, err := w.Write([]byte("event\n")); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://kverify.invalid/watch", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := Transport(h).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 6)
		if _, err := resp.Body.Read(buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // the handler's next write is blocked
		cancel()                            // and never Close: the handler must still end
		synctest.Wait()
		select {
		case <-handlerDone:
		default:
			t.Fatal("the handler still writes to a response whose request context ended")
		}
		if _, err := resp.Body.Read(buf); err == nil {
			t.Fatal("the body reads on after its request context ended")
		}
	})
}

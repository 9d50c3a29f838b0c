package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/kverify/kverify/props/modelserver"
	"github.com/kverify/kverify/props/wire"
	"github.com/kverify/kverify/spec/apiserver"
)

// serve runs the model API server over HTTP until interrupted: ConfigMaps
// in namespace default, with a seed's fault schedule and history, and
// optionally a write every --writes. Every request is logged as a JSON line
// when it ends.
func serve(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return serveUntil(ctx, args, os.Stdout)
}

// serveUntil is serve until ctx ends, printing the URL line to out.
func serveUntil(ctx context.Context, args []string, out io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8001", "listen address (loopback; port 0 picks one)")
	seed := fs.Uint64("seed", 0, "fault schedule and history of this seed (wire.Generate); 0: healthy, no history")
	schedule := fs.String("schedule", "", "fault schedule and history decoded from these hex bytes (wire.Decode), as a wire check's failure prints them")
	objects := fs.Int("objects", 3, "objects created at start (default/o000, ...), when --seed is 0")
	writes := fs.Duration("writes", 0, "update one object every this long (0: no writes but the seed's)")
	restart := fs.Duration("restart-every", 0, "restart the server (cut every stream, compact) every this long (0: never)")
	watchList := fs.Bool("watch-list", true, "the WatchList feature gate: a watch from \"\" or \"0\" streams initial events")
	logPath := fs.String("log", "-", "where the request log goes, a JSON line per request (-: stderr)")
	if _, code, done := parseArgs(fs, args); done {
		return code
	}
	sc := wire.Schedule{Objects: *objects}
	switch {
	case *schedule != "":
		b, err := hex.DecodeString(*schedule)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify serve: --schedule:", err)
			return 2
		}
		sc = wire.Decode(b).Realtime()
	case *seed != 0:
		sc = wire.Generate(*seed).Realtime()
	}
	logw := os.Stderr
	if *logPath != "-" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kverify serve:", err)
			return 2
		}
		defer f.Close()
		logw = f
	}
	model := modelserver.NewServer(apiserver.Config{NoWatchList: !*watchList}, sc.Faults)
	defer model.Close()
	srv := wire.NewServer(model)
	srv.WholeAtZero = true // as kube-apiserver's watch cache
	enc := json.NewEncoder(logw)
	srv.OnRequest = func(r wire.Request) { _ = enc.Encode(r) }
	if err := srv.Populate(sc.Objects); err != nil {
		fmt.Fprintln(os.Stderr, "kverify serve:", err)
		return 1
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kverify serve:", err)
		return 2
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "kverify serve: http://%s (configmaps in namespace %s; %s)\n", ln.Addr(), wire.Namespace, sc)
	trafficDone := make(chan struct{})
	go func() {
		defer close(trafficDone)
		traffic(ctx, srv, sc.Ops, *writes, *restart)
	}()
	shutDown := make(chan struct{})
	go func() {
		defer close(shutDown)
		<-ctx.Done()
		model.Close() // ends every open stream, so that Shutdown need not wait for them
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	err = hs.Serve(ln)
	cancel() // a listener that failed ends the rest too
	<-shutDown
	<-trafficDone
	if !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "kverify serve:", err)
		return 1
	}
	return 0
}

// traffic plays the schedule's steps, then writes and restarts at the
// given intervals until ctx ends.
func traffic(ctx context.Context, srv *wire.Server, ops []wire.Op, writes, restart time.Duration) {
	for _, op := range ops {
		if op.Kind == wire.OpWait {
			select {
			case <-ctx.Done():
				return
			case <-time.After(op.Wait):
			}
			continue
		}
		_ = srv.Apply(op)
	}
	tick := func(d time.Duration) <-chan time.Time {
		if d <= 0 {
			return nil
		}
		return time.Tick(d)
	}
	w, r := tick(writes), tick(restart)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-w:
			_ = srv.Apply(wire.Op{Kind: wire.OpWrite, Key: i % 8})
		case <-r:
			srv.Restart()
		}
	}
}

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// TestServeForAPerson runs kverify serve on a loopback port, as the README
// shows: curl's requests get discovery and a list, and a stock client-go
// program (kubernetes.NewForConfig, NewListWatchFromClient,
// NewSharedIndexInformer) syncs and then sees a write made while it
// watches. It runs in real time, bounded by a deadline.
func TestServeForAPerson(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- serveUntil(ctx, []string{"--addr", "127.0.0.1:0", "--objects", "3", "--writes", "50ms", "--log", t.TempDir() + "/log"}, pw)
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
		_ = pw.Close() // ends the copy below
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Fields(line)[2]

	for path, want := range map[string]string{
		"/version": `"gitVersion"`,
		"/api/v1/namespaces/default/configmaps?limit=2": `"continue"`,
	} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %s, want %s in it", path, body, want)
		}
	}

	cs, err := kubernetes.NewForConfig(&rest.Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "configmaps", "default", fields.Everything())
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	updates := make(chan string, 100)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o any) {
			select {
			case updates <- o.(*corev1.ConfigMap).Name:
			default:
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	ictx, icancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		inf.RunWithContext(ictx)
	}()
	defer func() { icancel(); <-ran }()
	deadline := time.After(30 * time.Second)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync within 30s")
	}
	if n := len(inf.GetStore().List()); n != 3 {
		t.Errorf("synced %d objects, want 3", n)
	}
	select {
	case <-updates:
	case <-deadline:
		t.Fatal("no update reached the informer within 30s")
	}
}

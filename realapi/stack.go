// Package realapi runs kube-apiserver's storage stack in-process, as a
// second oracle for the reflectors: embedded etcd on loopback, the etcd3
// store and the watch cache (cacher) of k8s.io/apiserver v0.37.2, served
// to a reflector as a ListerWatcher with the conversions the apiserver's
// REST layer does between an HTTP query and storage.Interface.
//
// It is its own module so that the main module does not take on the
// apiserver's and etcd's requirements. It runs in real time: the stack
// cannot run inside a synctest bubble (etcd's goroutines block on sockets,
// so fake time never advances).
package realapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/storage/etcd3"
	etcdfeature "k8s.io/apiserver/pkg/storage/feature"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/utils/clock"
)

// Scheme and Codec encode ConfigMaps for the store, as the apiserver's
// storage codec does (protobuf, core/v1).
var (
	Scheme = runtime.NewScheme()
	Codec  runtime.Codec
)

func init() {
	metav1.AddToGroupVersion(Scheme, metav1.SchemeGroupVersion)
	if err := corev1.AddToScheme(Scheme); err != nil {
		panic(err) // a static scheme: cannot fail
	}
	pb := protobuf.NewSerializer(Scheme, Scheme)
	Codec = serializer.NewCodecFactory(Scheme).CodecForVersions(pb, pb,
		schema.GroupVersions{corev1.SchemeGroupVersion}, schema.GroupVersions{corev1.SchemeGroupVersion})
}

// Prefix is the resource prefix of the ConfigMaps in etcd, under /registry.
const Prefix = "/configmaps/"

var gr = schema.GroupResource{Resource: "configmaps"}

// Etcd is an embedded etcd server on 127.0.0.1 with a data directory the
// caller owns.
type Etcd struct {
	dir       string
	clientURL url.URL
	peerURL   url.URL
	e         *embed.Etcd
	stopped   bool
}

// StartEtcd starts etcd with its data in dir, on two free loopback ports.
func StartEtcd(dir string) (*Etcd, error) {
	c, err := freeURL()
	if err != nil {
		return nil, err
	}
	p, err := freeURL()
	if err != nil {
		return nil, err
	}
	e := &Etcd{dir: dir, clientURL: c, peerURL: p}
	return e, e.start()
}

func freeURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, fmt.Errorf("realapi: no free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return url.URL{}, err
	}
	return url.URL{Scheme: "http", Host: addr}, nil
}

func (e *Etcd) start() error {
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "realapi", e.dir
	cfg.UnsafeNoFsync = true // test data, as the apiserver's own test server does
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{e.clientURL}, []url.URL{e.clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{e.peerURL}, []url.URL{e.peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.TickMs, cfg.ElectionMs = 10, 100 // ready in ~0.1 s instead of ~1 s
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	ee, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("realapi: start etcd: %w", err)
	}
	select {
	case <-ee.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		ee.Close()
		return errors.New("realapi: etcd not ready after 30s")
	}
	e.e, e.stopped = ee, false
	return nil
}

// Endpoint is the client URL.
func (e *Etcd) Endpoint() string { return e.clientURL.String() }

// Stop stops the server; its data stays. Stopping twice is a no-op.
func (e *Etcd) Stop() {
	if !e.stopped {
		e.e.Close()
		e.stopped = true
	}
}

// Restart stops the server and starts it again on the same ports and data.
func (e *Etcd) Restart() error {
	e.Stop()
	return e.start()
}

// Stack is the apiserver's storage for ConfigMaps: an etcd client, the
// etcd3 store, the cacher over it and the cache delegator the REST layer
// talks to.
type Stack struct {
	cli   *kubernetes.Client
	comp  interface{ Stop() }
	store storage.Interface
	cache *cacher.Cacher
	deleg *cacher.CacheDelegator

	stopOnce sync.Once
}

// NewStack builds the storage over etcd at endpoint and waits until the
// cache is ready and etcd's watch-progress support is known (without it a
// watch-list is refused and the reflector silently lists).
func NewStack(ctx context.Context, endpoint string) (*Stack, error) {
	cli, err := kubernetes.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("realapi: etcd client: %w", err)
	}
	s := &Stack{cli: cli}
	versioner := storage.APIObjectVersioner{}
	comp := etcd3.NewCompactor(cli.Client, 0, clock.RealClock{}, nil)
	s.comp = comp
	st, err := etcd3.New(cli, comp, Codec, newCM, newCMList, "/registry", Prefix, gr,
		identity.NewEncryptCheckTransformer(), etcd3.NewDefaultLeaseManagerConfig(),
		etcd3.NewDefaultDecoder(Codec, versioner), versioner)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("realapi: etcd3 store: %w", err)
	}
	s.store = st
	c, err := cacher.NewCacherFromConfig(cacher.Config{
		Storage: st, Versioner: versioner, GroupResource: gr,
		EventsHistoryWindow: cacher.DefaultEventFreshDuration,
		ResourcePrefix:      Prefix,
		KeyFunc:             func(o runtime.Object) (string, error) { return storage.NamespaceKeyFunc(Prefix, o) },
		GetAttrsFunc:        storage.DefaultNamespaceScopedAttr,
		NewFunc:             newCM, NewListFunc: newCMList, Codec: Codec, Clock: clock.RealClock{},
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("realapi: cacher: %w", err)
	}
	s.cache = c
	s.deleg = cacher.NewCacheDelegator(c, st)
	if err := c.Wait(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("realapi: cacher not ready: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return etcdfeature.DefaultFeatureSupportChecker.Supports(storage.RequestWatchProgress), nil
	})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("realapi: etcd's watch progress support unknown: %w", err)
	}
	return s, nil
}

func newCM() runtime.Object     { return &corev1.ConfigMap{} }
func newCMList() runtime.Object { return &corev1.ConfigMapList{} }

// Close stops the cache and the store and closes the etcd client. It is
// safe to call twice.
func (s *Stack) Close() {
	s.stopOnce.Do(func() {
		if s.deleg != nil {
			s.deleg.Stop()
		}
		if s.cache != nil {
			s.cache.Stop()
		}
		if c, ok := s.store.(interface{ Close() }); ok {
			c.Close()
		}
		if s.comp != nil {
			s.comp.Stop()
		}
		_ = s.cli.Close()
	})
}

// Key is the storage key of namespace/name.
func Key(namespace, name string) string { return Prefix + namespace + "/" + name }

// Create creates a ConfigMap and returns its resource version.
func (s *Stack) Create(ctx context.Context, namespace, name string, data map[string]string) (string, error) {
	in := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
	out := &corev1.ConfigMap{}
	if err := s.deleg.Create(ctx, Key(namespace, name), in, out, 0); err != nil {
		return "", storeerr.InterpretCreateError(err, gr, name)
	}
	return out.ResourceVersion, nil
}

// Update sets one data entry of a ConfigMap and returns its new version.
func (s *Stack) Update(ctx context.Context, namespace, name, k, v string) (string, error) {
	out := &corev1.ConfigMap{}
	err := s.deleg.GuaranteedUpdate(ctx, Key(namespace, name), out, false, nil,
		storage.SimpleUpdate(func(o runtime.Object) (runtime.Object, error) {
			cm := o.(*corev1.ConfigMap).DeepCopy()
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[k] = v
			return cm, nil
		}), nil)
	if err != nil {
		return "", storeerr.InterpretUpdateError(err, gr, name)
	}
	return out.ResourceVersion, nil
}

// Delete deletes a ConfigMap.
func (s *Stack) Delete(ctx context.Context, namespace, name string) error {
	_, err := s.DeleteRV(ctx, namespace, name)
	return err
}

// DeleteRV deletes a ConfigMap and returns the version of the deletion,
// which the DELETED event's object carries.
func (s *Stack) DeleteRV(ctx context.Context, namespace, name string) (string, error) {
	out := &corev1.ConfigMap{}
	if err := s.deleg.Delete(ctx, Key(namespace, name), out, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{}); err != nil {
		return "", storeerr.InterpretDeleteError(err, gr, name)
	}
	return out.ResourceVersion, nil
}

// Compact compacts etcd's history up to the store's current revision, so
// that a watch from an older version gets 410 Expired from etcd.
func (s *Stack) Compact(ctx context.Context) (int64, error) {
	resp, err := s.cli.Client.Get(ctx, "compact-probe")
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	if _, err := s.cli.Client.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return 0, err
	}
	return rev, nil
}

// State is the server's state: every ConfigMap's key and version, read
// from etcd (a consistent read), at the returned version.
func (s *Stack) State(ctx context.Context) (map[string]string, string, error) {
	list := &corev1.ConfigMapList{}
	err := s.store.GetList(ctx, Prefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list)
	if err != nil {
		return nil, "", err
	}
	m := make(map[string]string, len(list.Items))
	for _, cm := range list.Items {
		m[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return m, list.ResourceVersion, nil
}

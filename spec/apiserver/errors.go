package apiserver

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The server's answers are the errors a real kube-apiserver returns, built
// with k8s.io/apimachinery/pkg/api/errors, so an adapter returns them as
// they are and client-go's predicates (IsResourceExpired, HasStatusCause,
// IsTooManyRequests, utilnet.IsConnectionRefused) recognise them.

// listExpired is etcd3's message for an exact list at a compacted RV
// (apiserver storage/etcd3/store.go).
const listExpired = "The resourceVersion for the provided list is too old."

// continueExpired is etcd3's message for a continue token whose snapshot
// was compacted.
const continueExpired = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent " +
	"list - objects that were created, modified, or deleted between the time the first chunk was returned " +
	"and now may show up in the list."

// TooLarge is the error for a request that needs an RV newer than the
// server's current one, as apiserver's storage.NewTooLargeResourceVersionError
// builds it: a 504 Timeout whose cause is metav1.CauseTypeResourceVersionTooLarge
// with the message "Too large resource version", retry after 1 s (the watch
// cache's value). Both of the reflector's checks (the cause, and the legacy
// message) recognise it.
func TooLarge(requested, current int64) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return err
}

// TooOld is the error a watch from a compacted RV receives as its only
// event: 410 Expired "too old resource version: requested (oldest)", as the
// watch cache words it.
func TooOld(requested, compacted int64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, compacted))
}

// Status returns a realistic failure status for an HTTP code, for ERROR
// events and rejections: 410 Expired, 429 TooManyRequests (retry after 1 s),
// 500 InternalError, 504 Timeout; any other code gets apierrors'
// generic server response for it.
func Status(code int32) *metav1.Status {
	var err *apierrors.StatusError
	switch code {
	case http.StatusGone:
		err = apierrors.NewResourceExpired("too old resource version")
	case http.StatusTooManyRequests:
		err = apierrors.NewTooManyRequests("the server has received too many requests", 1)
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New("model server fault"))
	case http.StatusGatewayTimeout:
		err = apierrors.NewTimeoutError("model server fault", 1)
	default:
		err = apierrors.NewGenericServerResponse(int(code), "watch", schema.GroupResource{}, "", "model server fault", 0, false)
	}
	return &err.ErrStatus
}

// Gone returns the status a Kubernetes 1.17 server answered an expired
// version with: 410 with the reason Gone rather than Expired. client-go
// still takes it as expired (isExpiredError, reflector.go:1154-1160:
// "In Kubernetes 1.17 and earlier, the api server returns both
// StatusReasonExpired and StatusReasonGone"), so a reflector must too.
func Gone() *metav1.Status {
	//lint:ignore SA1019 deprecated for servers to send, but older ones did, and a client must still take it
	err := apierrors.NewGone("too old resource version")
	return &err.ErrStatus
}

// ConnectionRefused returns the error a client gets when the server is not
// listening: a dial *net.OpError wrapping ECONNREFUSED, which
// utilnet.IsConnectionRefused recognises.
func ConnectionRefused() error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// validate applies the server's defaulting (watches only, when the
// WatchList gate is on) and apimachinery's ListOptions validation, as
// kube-apiserver's handlers do, and returns the defaulted options. Invalid
// options give the handlers' 400 Invalid error.
func (s *Server) validate(opts metav1.ListOptions, watch bool) (metav1.ListOptions, error) {
	in := internalversion.ListOptions{
		Watch:                watch,
		AllowWatchBookmarks:  opts.AllowWatchBookmarks,
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Limit:                opts.Limit,
		Continue:             opts.Continue,
		SendInitialEvents:    opts.SendInitialEvents,
	}
	gate := !s.cfg.NoWatchList
	internalversion.SetListOptionsDefaults(&in, gate)
	if errs := validation.ValidateListOptions(&in, gate); len(errs) > 0 {
		return opts, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", errs)
	}
	opts.SendInitialEvents, opts.ResourceVersionMatch = in.SendInitialEvents, in.ResourceVersionMatch
	return opts, nil
}

// parseRV parses a non-empty, non-"0" request RV; err, for one that is
// not a number, is the storage layer's message
// (storage.APIObjectVersioner.ParseResourceVersion, a field.Invalid on
// resourceVersion), which the two requests answer differently: see
// badListRV and badWatchRV.
func parseRV(rv string) (int64, string) {
	n, err := strconv.ParseUint(rv, 10, 63)
	if err != nil {
		return 0, fmt.Sprintf("resourceVersion: Invalid value: %q: %v", rv, err)
	}
	return int64(n), ""
}

// badListRV is a LIST's answer to an RV that is not a number: 400
// BadRequest, from storage.ValidateListOptions
// (k8s.io/apiserver v0.37.2 pkg/storage/interfaces.go:391-394).
func badListRV(msg string) error {
	return apierrors.NewBadRequest("invalid resource version: " + msg)
}

// badWatchRV is a WATCH's answer to an RV that is not a number: 500 with
// no reason. The watch cache returns the storage layer's Invalid error
// (pkg/storage/cacher/cacher.go:526-529), the registry passes it on
// unconverted (pkg/registry/generic/registry/store.go:1543-1545), and the
// handler answers a non-API error with 500 (responsewriters.
// ErrorToAPIStatus). A real kube-apiserver answers
// `?watch=true&resourceVersion=-1` so (kubernetes#139485, open; PR
// #139525, open, would make it a 400).
func badWatchRV(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}

// refusal is the fault shared by List and Watch choices.
func refusal(refuse bool, reject *metav1.Status) error {
	if refuse {
		return ConnectionRefused()
	}
	if reject != nil {
		return &apierrors.StatusError{ErrStatus: *reject.DeepCopy()}
	}
	return nil
}

package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ListChoice holds the server's choices and faults for one List.
type ListChoice struct {
	// At, if not 0, serves the request from the snapshot at this RV
	// instead of the current state (a lagging watch cache). Allowed only
	// where the semantics allow a stale answer: RV "0" (any version; At in
	// [1, RV()]) and a not-older-than read of RV n (At in [n, RV()]).
	At int64
	// IgnoreLimit serves the whole list in one page, as the watch cache
	// does for RV "0" ("servers may choose not to support the limit").
	IgnoreLimit bool
	// Refuse fails the request with ConnectionRefused.
	Refuse bool
	// Reject, if set, fails the request with this status (e.g. Status(429)).
	Reject *metav1.Status
}

// List serves a LIST request and records it.
//
// Resource version rules (metav1.ListOptions; api-concepts "Resource
// versions"):
//   - RV "": most recent, a consistent read at the current RV.
//   - RV "0" (with no match or NotOlderThan): any; the current state unless
//     ListChoice.At picks an older snapshot.
//   - RV n with NotOlderThan, or with no match and no limit: not older than
//     n; the current state (or At >= n). Never Expired.
//   - RV n with Exact, or with no match and a limit: exactly n; Expired
//     (410) if n is below the compaction point.
//   - RV n above the current RV: TooLarge, whatever the match.
//   - Invalid combinations (a match without an RV, Exact with "0", a match
//     with continue, sendInitialEvents) get the 400 Invalid of apimachinery's
//     validation; an RV that is not a number gets 400 BadRequest (see
//     badListRV).
//
// Paging: with Limit > 0 (and not IgnoreLimit), items come in key order,
// at most Limit per page; a page that is not the last carries a continue
// token that encodes the snapshot RV and the last key returned, and
// RemainingItemCount. A continue request is served from the token's
// snapshot whatever has been written since; its RV must be "" or "0"
// (else 400 BadRequest). A token whose snapshot is below the compaction
// point is Expired, and the error carries a token that continues after the
// same key at the latest RV (an inconsistent continuation), as etcd3 does.
func (s *Server) List(opts metav1.ListOptions, c ListChoice) (*metav1.PartialObjectMetadataList, error) {
	list, err := s.list(opts, c)
	s.record(ListCall, &opts, 0, err)
	if err != nil {
		return nil, err
	}
	return list, nil
}

func (s *Server) list(opts metav1.ListOptions, c ListChoice) (*metav1.PartialObjectMetadataList, error) {
	if err := refusal(c.Refuse, c.Reject); err != nil {
		return nil, err
	}
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		return nil, ErrUnsupported
	}
	if _, err := s.validate(opts, false); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if c.IgnoreLimit {
		limit = 0
	}
	if opts.Continue != "" {
		return s.continueList(opts, limit, c)
	}
	var at int64
	var err error
	switch rv := opts.ResourceVersion; {
	case rv == "":
		if c.At != 0 {
			return nil, fmt.Errorf("%w: a consistent read (RV \"\") is never stale", ErrBadChoice)
		}
		at = s.rv
	case rv == "0":
		at, err = s.choose(c.At, 1)
	default:
		n, bad := parseRV(rv)
		if bad != "" {
			return nil, badListRV(bad)
		}
		if n > s.rv {
			return nil, TooLarge(n, s.rv)
		}
		exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
			(opts.ResourceVersionMatch == "" && opts.Limit > 0)
		if !exact {
			at, err = s.choose(c.At, n)
			break
		}
		if c.At != 0 && c.At != n {
			return nil, fmt.Errorf("%w: an exact read at %d served at %d", ErrBadChoice, n, c.At)
		}
		if n < s.compacted {
			return nil, apierrors.NewResourceExpired(listExpired)
		}
		at = n
	}
	if err != nil {
		return nil, err
	}
	return s.page(at, "", limit), nil
}

func (s *Server) continueList(opts metav1.ListOptions, limit int64, c ListChoice) (*metav1.PartialObjectMetadataList, error) {
	tok, err := decodeContinue(opts.Continue)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
	}
	if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		return nil, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
	}
	if c.At != 0 {
		return nil, fmt.Errorf("%w: a continue request is served from its token's snapshot", ErrBadChoice)
	}
	at := tok.RV
	switch {
	case tok.RV == -1:
		at = s.rv
	case tok.RV < 1 || tok.RV > s.rv:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: resource version %d", tok.RV))
	case tok.RV < s.compacted:
		err := apierrors.NewResourceExpired(continueExpired)
		err.ErrStatus.ListMeta.Continue = encodeContinue(-1, tok.Last)
		return nil, err
	}
	return s.page(at, tok.Last, limit), nil
}

// page returns the objects at rv with keys after last (all if last is ""),
// at most limit of them if limit > 0.
func (s *Server) page(rv int64, last string, limit int64) *metav1.PartialObjectMetadataList {
	objs := s.snapshot(rv)
	i := sort.Search(len(objs), func(i int) bool { return objs[i].Key > last })
	objs = objs[i:]
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatInt(rv, 10)}}
	if limit > 0 && int64(len(objs)) > limit {
		rest := int64(len(objs)) - limit
		objs = objs[:limit]
		list.Continue = encodeContinue(rv, objs[len(objs)-1].Key)
		list.RemainingItemCount = &rest
	}
	list.Items = make([]metav1.PartialObjectMetadata, len(objs))
	for i, o := range objs {
		list.Items[i] = *o.Meta()
	}
	return list
}

// continueToken is the decoded form of a continue token. RV -1 continues
// at the latest RV (the token an Expired continue error carries).
type continueToken struct {
	RV   int64  `json:"rv"`
	Last string `json:"last"`
}

func encodeContinue(rv int64, last string) string {
	b, _ := json.Marshal(continueToken{RV: rv, Last: last}) // cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, err
	}
	if t.Last == "" {
		return t, fmt.Errorf("no key")
	}
	return t, nil
}

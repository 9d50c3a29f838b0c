package reflector

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// list syncs the store by LIST: from relistRV(), paged, retried once from
// "" when that version is expired or ahead of the server; one Replace of
// the whole result, and only then the list's version is published.
func (r *Reflector) list(ctx context.Context) error {
	rv := r.relistRV()
	pageSize := r.pageSize(rv)
	items, listRV, paged, err := r.pagedList(ctx, rv, pageSize)
	if err != nil && (isExpired(err) || isTooLarge(err)) {
		r.setUnavailable(true)
		rv = r.relistRV()
		items, listRV, paged, err = r.pagedList(ctx, rv, pageSize)
	}
	if err != nil {
		return fmt.Errorf("%s: list: %w", r.name, err)
	}
	r.mu.Lock()
	if rv == "0" && paged {
		r.paginated = true
	}
	r.unavailable = false
	r.mu.Unlock()
	if err := r.store.Replace(items, listRV); err != nil {
		return fmt.Errorf("%s: replacing the store's content with the list at %q: %w", r.name, listRV, err)
	}
	r.setLastSync(listRV)
	return nil
}

// pageSize is client-go's decision (reflector.go:696-717): the configured
// size; else pages of 500 if a list from "0" ever came in pages; else no
// limit for an exact version (the watch cache serves it whole, and a limit
// would force an exact read from etcd); else 500. With paging off, no
// limit.
func (r *Reflector) pageSize(rv string) int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.opts.Paging == PagingOff:
		return 0
	case r.opts.WatchListPageSize > 0:
		return r.opts.WatchListPageSize
	case r.paginated:
		return DefaultPageSize
	case rv != "" && rv != "0":
		return 0
	}
	return DefaultPageSize
}

// pagedList lists every page, following continue tokens (which carry the
// snapshot, so continuations send no version). An expired continuation
// falls back to one full list at the original version, as client-go's
// pager does (tools/pager/pager.go:114-124): only for the reason Expired.
// A 410 Gone (a 1.17 server's expired version) fails the list, and the
// caller retries it from "" as for any expired list.
func (r *Reflector) pagedList(ctx context.Context, rv string, limit int64) (items []any, listRV string, paged bool, err error) {
	opts := metav1.ListOptions{ResourceVersion: rv, Limit: limit}
	for {
		obj, err := r.lw.ListWithContext(ctx, opts)
		if err != nil {
			if opts.Continue != "" && apierrors.IsResourceExpired(err) {
				obj, err = r.lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
				if err != nil {
					return nil, "", paged, err
				}
				items, listRV, _, err = extract(obj, nil)
				return items, listRV, paged, err
			}
			return nil, "", paged, err
		}
		var cont, pageRV string
		items, pageRV, cont, err = extract(obj, items)
		if err != nil {
			return nil, "", paged, err
		}
		if !paged {
			// The first page's version is the list's (the pager's rule).
			listRV = pageRV
		}
		if cont == "" {
			return items, listRV, paged, nil
		}
		if r.opts.Paging == PagingOff {
			// Following it would page a reflector that does not page.
			return nil, "", paged, fmt.Errorf("the server answered a list without a limit with a continue token, and paging is off")
		}
		paged = true
		opts = metav1.ListOptions{Limit: limit, Continue: cont}
	}
}

// extract appends the list's items to items and returns its version and
// continue token.
func extract(obj runtime.Object, items []any) ([]any, string, string, error) {
	if obj == nil {
		return nil, "", "", fmt.Errorf("the server returned no list")
	}
	m, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, "", "", fmt.Errorf("the server returned %T, not a list: %w", obj, err)
	}
	// A copy of each item, as client-go's pager makes
	// (EachListItemWithAlloc): a pointer into the page would keep the
	// whole page alive for as long as one of its objects is stored.
	objs, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return nil, "", "", fmt.Errorf("extracting the items of %T: %w", obj, err)
	}
	for _, o := range objs {
		items = append(items, o)
	}
	return items, m.GetResourceVersion(), m.GetContinue(), nil
}

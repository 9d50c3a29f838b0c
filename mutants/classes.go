package mutants

// Class is one class of bug that independent implementations got past the
// checks (issue 27), with the catalogue mutants that fall in it: each was
// a survivor of the checks before the class was fixed, and the kill
// matrix shows which check kills it now.
type Class struct {
	N       int    // the number for the class
	Name    string // what escaped
	Mutants []string
}

// Classes lists the classes and their mutants; TestClasses keeps every ID
// in the catalogue and at least MinPerClass mutants in each class.
var Classes = []Class{
	{1, "inputs the API allows but the generators never made", []string{
		"dfifo-replace-count-dup-keys", "delta-key-ignores-namespace", "process-replacedall-dup-keys", "rfifo-replace-empty-noop",
		"rfifo-popbatch-error-dropped", "rl-bucket-inf-qps", "ring-initial-size-capped", "chunked-size-clamped", "dq-far-timer-skipped"}},
	{2, "error paths tried only from states where the bug cannot show", []string{
		"dfifo-delete-badkey-populates", "dfifo-add-badkey-unpopulated", "rfifo-produce-failed-unpopulated", "rfifo-replace-failed-populates"}},
	{3, "no faults in collaborators", []string{
		"dfifo-delete-lookup-error-drops", "dfifo-replace-lookup-error-no-tombstone", "dfifo-resync-foreign-skipped", "dfifo-add-transform-error-queues",
		"rfifo-resync-lookup-error-returns", "rfifo-replace-ghost-no-tombstone",
		"bo-delay-mark-monotonic", "bo-delay-reset-on-clock-jump", "rq-when-under-lock", "rq-when-panic-adds"}},
	{4, "a declared divergence hides the rest of its check", []string{
		"up-fifo-delete-swallows-error", "up-fifo-update-swallows-error", "up-dfifo-pop-keeps-last", "up-reflector-run-returns-early", "up-reflector-no-expected-type"}},
	{5, "the relist-or-rewatch decision pinned only by fixed scenarios", []string{
		"refl-watch-after-failed-list", "refl-very-short-from-first-watch", "refl-504-watch-retried", "refl-watchlist-restreams-after-close"}},
	{6, "an observable compared in only some machines", []string{
		"dq-addafter-counts-add", "dq-shutdown-depth-waiting", "wq-metrics-unfinished-skips-idle", "wq-metrics-longest-is-total",
		"rq-forget-counts-retry", "rq-zero-delay-skips-retry"}},
	{7, "liveness and fairness under sustained load", []string{
		"wq-overload-lifo", "wq-done-readd-head-busy", "wq-touch-jumps-ahead-busy", "wq-get-newest-past-8192", "dq-ready-starved-busy"}},
	{9, "handler calls compared only in part on the assembled informer", []string{
		"inf-shared-late-initial-false", "inf-delta-relist-add-initial", "inf-listener-update-old-is-new",
		"inf-shared-resync-check-default", "inf-shared-resync-no-should", "inf-shared-late-period-not-raised",
		"inf-shared-resync-next-from-zero", "inf-delta-syncall-dropped", "inf-shared-run-no-wait-processor",
		"inf-shared-run-no-wait-reflector", "inf-reflector-list-no-ctx"}},
	{10, "what a real server may send but the model server never did", []string{
		"refl-initial-bookmark-ends-sync", "refl-initial-bookmark-published", "refl-gone-not-expired", "refl-504-error-rewatches", "refl-too-large-watch-retried"}},
}

// MinPerClass is the number of mutants each class must have.
const MinPerClass = 4

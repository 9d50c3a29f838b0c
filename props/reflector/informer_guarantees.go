package reflector

// The assembled informer's guarantees of resync (assembled/resync) and of
// stopping its reflector (assembled/stop), declared apart from
// guarantees.go while that file is edited elsewhere; Guarantees and
// InformerGuarantees list them.
const (
	// GuaranteeHandlerResync: a handler was resynced (OnUpdate(o, o) for
	// every stored object) at a resync check it was not due at, was not
	// at one it was due at, or was given other objects than the store's.
	GuaranteeHandlerResync = "each handler is resynced at exactly the checks its own period makes it due at"
	// GuaranteeRunWaitsReflector: Run returned while its reflector was
	// still inside a call to the server (a watch's Stop, which takes no
	// context), or a request of the reflector was still in flight after
	// Run returned: Run must return only once its reflector has.
	GuaranteeRunWaitsReflector = "Run returns only once its reflector has stopped, with no request of it in flight"
)

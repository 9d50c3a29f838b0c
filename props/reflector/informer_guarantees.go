package reflector

// The assembled informer's guarantee of resync (assembled/resync), declared
// apart from guarantees.go while that file is edited elsewhere; Guarantees
// and InformerGuarantees list it.
const (
	// GuaranteeHandlerResync: a handler was resynced (OnUpdate(o, o) for
	// every stored object) at a resync check it was not due at, was not
	// at one it was due at, or was given other objects than the store's.
	GuaranteeHandlerResync = "each handler is resynced at exactly the checks its own period makes it due at"
)

package controller

// The guarantee constants were renamed to the G prefix every props
// package uses; these names keep a subject that declares divergences with
// the old ones building.
const (
	// GuaranteeStop is the old name of GStop.
	//
	// Deprecated: use GStop.
	GuaranteeStop = GStop
	// GuaranteeSyncFirst is the old name of GSyncFirst.
	//
	// Deprecated: use GSyncFirst.
	GuaranteeSyncFirst = GSyncFirst
)

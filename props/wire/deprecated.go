package wire

// The guarantee constants were renamed to the G prefix every props
// package uses; these names keep a subject that declares divergences with
// the old ones building.
const (
	// GuaranteeStart is the old name of GStart.
	//
	// Deprecated: use GStart.
	GuaranteeStart = GStart
	// GuaranteeEarned is the old name of GEarned.
	//
	// Deprecated: use GEarned.
	GuaranteeEarned = GEarned
	// GuaranteeHandlers is the old name of GHandlers.
	//
	// Deprecated: use GHandlers.
	GuaranteeHandlers = GHandlers
	// GuaranteeInitialAdds is the old name of GInitialAdds.
	//
	// Deprecated: use GInitialAdds.
	GuaranteeInitialAdds = GInitialAdds
	// GuaranteeSynced is the old name of GSynced.
	//
	// Deprecated: use GSynced.
	GuaranteeSynced = GSynced
	// GuaranteeConverge is the old name of GConverge.
	//
	// Deprecated: use GConverge.
	GuaranteeConverge = GConverge
)

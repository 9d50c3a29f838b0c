package checkkit

import (
	"fmt"
	"math/rand/v2"

	"github.com/kverify/kverify/internal/kvenv"
)

// LinearSeed is the first seed of a linearizability check's scenarios:
// KVERIFY_LINEAR_SEED when set, else random. A seed repeats each client's
// choices, not the scheduling: the saved history is the exact replay.
// (A malformed KVERIFY_LINEAR_SEED fails Run before any check starts.)
func (c Config) LinearSeed() uint64 {
	if env := c.environ(); env.HasLinearSeed {
		return env.LinearSeed
	}
	return rand.Uint64()
}

// LinearSeedHint tells how to rerun a linearizability check's choices.
func LinearSeedHint(seed uint64) string {
	return fmt.Sprintf("rerun the same choices with %s", kvenv.Config{LinearSeed: seed, HasLinearSeed: true}.Environ()[0])
}

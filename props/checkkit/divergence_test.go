package checkkit

import (
	"errors"
	"testing"
)

// A declaration narrowed to some guarantees covers only their violations.
func TestDivergenceCovers(t *testing.T) {
	fair := Broke("Fair", "b before a")
	stingy := Broke("Stingy", "a twice")
	whole := Divergence{Check: "c"}
	narrow := Divergence{Check: "c", Guarantees: []string{"Fair", "Tie order"}}
	for _, c := range []struct {
		d    Divergence
		err  error
		want bool
	}{
		{whole, fair, true},
		{whole, stingy, true},
		{whole, errors.New("not a violation"), true},
		{narrow, fair, true},
		{narrow, stingy, false},
		{narrow, errors.New("not a violation"), false},
	} {
		if got := c.d.covers(c.err); got != c.want {
			t.Errorf("%+v covers %v = %v, want %v", c.d.Guarantees, c.err, got, c.want)
		}
	}
}

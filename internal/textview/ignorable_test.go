package textview

import (
	"testing"
	"unicode"
)

// TestIgnorableMatchesDerivation compares the written-out ranges with
// Default_Ignorable_Code_Point as DerivedCoreProperties.txt derives it:
// Other_Default_Ignorable_Code_Point + Cf + Variation_Selector
// - White_Space - FFF9..FFFB - 13430..1343F - Prepended_Concatenation_Mark.
func TestIgnorableMatchesDerivation(t *testing.T) {
	if unicode.Version != "15.0.0" {
		t.Logf("unicode tables are %s; the ranges follow 15.0.0", unicode.Version)
	}
	derived := func(r rune) bool {
		in := unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
			unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
		out := unicode.Is(unicode.White_Space, r) ||
			(0xFFF9 <= r && r <= 0xFFFB) || (0x13430 <= r && r <= 0x1343F) ||
			unicode.Is(unicode.Prepended_Concatenation_Mark, r)
		return in && !out
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got, want := isIgnorable(r), derived(r); got != want {
			t.Errorf("isIgnorable(%U) = %v, derivation says %v", r, got, want)
		}
	}
}

package wire

import (
	"regexp"
)

// The shapes of answer metadata. Metadata is never model text, so every
// surface holds it to a token shape of bounded length: a value outside
// its shape could carry text no verdict saw.
var (
	idShape    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	modelShape = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$`)
)

// IsID reports whether s is shaped like a provider-issued identifier.
func IsID(s string) bool { return idShape.MatchString(s) }

// IsModelName reports whether s is shaped like a model name.
func IsModelName(s string) bool { return modelShape.MatchString(s) }

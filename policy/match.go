package policy

import (
	"path"
	"strconv"
)

// glob reports whether value matches pattern; an empty pattern matches
// anything, and a set pattern never matches an empty value (a request that
// does not say its tenant is not some tenant's).
func glob(pattern, value string) bool {
	if pattern == "" {
		return true
	}
	if value == "" {
		return false
	}
	ok, err := path.Match(pattern, value)
	return err == nil && ok // patterns are checked at load
}

func itoa(i int) string { return strconv.Itoa(i) }

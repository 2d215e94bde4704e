package wire

import (
	"errors"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
)

// CheckEncodable is the write-back check every surface makes of a
// transformed target: it rejects values Marshal would refuse (invalid
// number tokens, invalid UTF-8, non-finite floats, foreign Go types) with
// a *WriteBackError naming the path in the target. A value tree, which a
// transform's target is but for a host's own Go values, is encodable:
// that quicker walk comes first, and Check then names what is wrong.
func CheckEncodable(target any) error {
	if jsonvalue.IsValueTree(target) {
		return nil
	}
	err := jsonvalue.Check(target, jsonvalue.Limits{})
	if err == nil {
		return nil
	}
	var pe *jsonvalue.PathError
	if errors.As(err, &pe) {
		return &WriteBackError{Field: "$target" + pe.Path[1:], Msg: pe.Err.Error()}
	}
	return &WriteBackError{Field: "$target", Msg: "is not encodable JSON"}
}

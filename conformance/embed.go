package conformance

import (
	"embed"
	"io/fs"
)

// EmbeddedVectorsDir is the directory of SpecFS holding the CTK vectors.
const EmbeddedVectorsDir = "spec/vectors"

// spec is the vendored upstream conformance data (read-only).
//
//go:embed spec
var spec embed.FS

// SpecFS exposes the vendored upstream conformance data: spec/vectors,
// spec/vectors.schema.json, spec/golden, spec/schema and
// spec/reserved-reasons.json.
func SpecFS() fs.FS { return spec }

// EmbeddedVectors loads the vendored CTK vectors.
func EmbeddedVectors() ([]*Vector, error) {
	return LoadVectors(spec, EmbeddedVectorsDir)
}

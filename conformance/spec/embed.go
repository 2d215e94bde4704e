// Package spec embeds the AGENT-HOOKS-0.1 JSON schemas of the upstream
// conformance data vendored in this folder (MIT, see LICENSE and
// UPSTREAM.md), so packages the conformance package depends on can use
// the same single copy.
package spec

import (
	"embed"
	"io/fs"
)

//go:embed schema/*.json schema/agent-context/*.json
var schemas embed.FS

// Schemas returns the schema folder: agent-context.schema.json,
// agent-context/<point>.schema.json, interception-record.schema.json,
// interception-point.schema.json, verdict.schema.json and
// approval.schema.json.
func Schemas() fs.FS {
	sub, err := fs.Sub(schemas, "schema")
	if err != nil {
		panic(err) // "schema" is a valid, embedded path
	}
	return sub
}

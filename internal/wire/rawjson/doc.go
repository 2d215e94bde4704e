// Package rawjson locates members and elements inside a JSON document by
// byte offset, so that the untouched parts of a body are re-emitted byte
// for byte (number tokens, key order, whitespace) and only what a verdict
// changed is rewritten. It also holds the member-name sets the wire
// packages use to refuse unknown and ambiguous members.
//
// Every function assumes its input already passed json.Valid; it then only
// has to find value boundaries, never to diagnose syntax.
package rawjson

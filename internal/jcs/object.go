package jcs

// Member is one member of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object given as its members, in any order. Keys must be
// distinct. It canonicalizes exactly as the map[string]any with the same
// members would, without the map being built: hosts use it for
// projections made once per hash.
type Object []Member

package jcs

// Member is one member of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object given as its members, in any order. Keys must be
// distinct. It canonicalizes exactly as the map[string]any with the same
// members would, without the map being built: hosts use it for
// projections made once per hash. A *Object is accepted wherever an Object
// is and canonicalizes as the Object it points to (a nil one as {}), so a
// projection can nest sub-objects without boxing slices.
type Object []Member

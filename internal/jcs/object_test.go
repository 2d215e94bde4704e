package jcs

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestObjectCanonicalizesLikeMap(t *testing.T) {
	m := map[string]any{"b": json.Number("1"), "a": []any{"x", map[string]any{"z": true, "y": nil}}, "é": "v", "A": 2.5}
	var o Object
	for _, k := range []string{"é", "b", "A", "a"} { // deliberately unsorted
		o = append(o, Member{Key: k, Value: m[k]})
	}
	want, err := Canonicalize(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Canonicalize(Object{{Key: "outer", Value: o}})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"outer":`+string(want)+`}` {
		t.Fatalf("Object: %s, want the map's %s", got, want)
	}
	idM, _ := SHA256Identity(m, 0)
	idO, _ := SHA256Identity(o, 0)
	if idM != idO {
		t.Fatalf("identities differ: %s vs %s", idM, idO)
	}
}

func TestObjectIntegerDomain(t *testing.T) {
	o := Object{{Key: "ok", Value: json.Number("1")}, {Key: "id", Value: json.Number("9007199254740993")}}
	if err := CheckIntegerDomain(o); !errors.Is(err, ErrIntegerRange) {
		t.Fatalf("CheckIntegerDomain = %v, want ErrIntegerRange", err)
	}
	if _, err := SHA256Identity(o, 0); !errors.Is(err, ErrIntegerRange) {
		t.Fatalf("SHA256Identity = %v, want ErrIntegerRange", err)
	}
}

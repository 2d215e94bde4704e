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

// A *Object canonicalizes, hashes and fails exactly as the Object it
// points to, errors and depth included; a nil one is {}.
func TestObjectPointerLikeObject(t *testing.T) {
	inner := Object{{Key: "b", Value: json.Number("1")}, {Key: "a", Value: []any{"x"}}}
	bad := Object{{Key: "ok", Value: true}, {Key: "id", Value: json.Number("9007199254740993")}}
	var nilObj *Object
	cases := []struct{ byValue, byPointer any }{
		{Object{{Key: "o", Value: inner}}, Object{{Key: "o", Value: &inner}}},
		{inner, &inner},
		{Object{{Key: "o", Value: Object(nil)}}, Object{{Key: "o", Value: nilObj}}},
		{Object{{Key: "o", Value: bad}}, Object{{Key: "o", Value: &bad}}},
	}
	for i, c := range cases {
		want, wantErr := Canonicalize(c.byValue)
		got, gotErr := Canonicalize(c.byPointer)
		if string(got) != string(want) || errString(gotErr) != errString(wantErr) {
			t.Errorf("%d: Canonicalize %s, %v; want %s, %v", i, got, gotErr, want, wantErr)
		}
		wantID, wantErr := SHA256Identity(c.byValue, 2)
		gotID, gotErr := SHA256Identity(c.byPointer, 2)
		if gotID != wantID || errString(gotErr) != errString(wantErr) {
			t.Errorf("%d: SHA256Identity %s, %v; want %s, %v", i, gotID, gotErr, wantID, wantErr)
		}
		if a, b := errString(CheckIntegerDomain(c.byPointer)), errString(CheckIntegerDomain(c.byValue)); a != b {
			t.Errorf("%d: CheckIntegerDomain %s, want %s", i, a, b)
		}
	}
	if got, _ := Canonicalize(nilObj); string(got) != "{}" {
		t.Errorf("nil *Object: %s, want {}", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

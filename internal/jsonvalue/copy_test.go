package jsonvalue

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDeepCopy(t *testing.T) {
	v := mustDecode(t, `{"a":[1,{"b":[[],{}]},"s"],"c":{"d":null,"e":true},"n":18446744073709551616}`)
	before := mustMarshal(t, v)
	c := DeepCopy(v)
	if !reflect.DeepEqual(c, v) || !Equal(c, v) {
		t.Fatal("copy differs")
	}
	mutateAll(c)
	if after := mustMarshal(t, v); after != before {
		t.Fatalf("mutating the copy changed the original: %s", after)
	}
}

func TestDeepCopyEdgeCases(t *testing.T) {
	if DeepCopy(nil) != nil {
		t.Error("nil")
	}
	if m := DeepCopy(map[string]any(nil)).(map[string]any); m != nil {
		t.Error("typed nil map not preserved")
	}
	if s := DeepCopy([]any(nil)).([]any); s != nil {
		t.Error("typed nil slice not preserved")
	}
	for _, v := range []any{"s", json.Number("1"), true, 1.5} {
		if DeepCopy(v) != v {
			t.Errorf("scalar %v changed", v)
		}
	}
	// Non-tree values are returned as they are.
	ss := []string{"x"}
	if got := DeepCopy(ss).([]string); &got[0] != &ss[0] {
		t.Error("non-tree value was copied")
	}
	// Empty containers are fresh.
	e := map[string]any{"m": map[string]any{}, "s": []any{}}
	c := DeepCopy(e).(map[string]any)
	c["m"].(map[string]any)["new"] = 1
	if len(e["m"].(map[string]any)) != 0 {
		t.Error("empty map aliased")
	}
}

package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestSealParse(t *testing.T) {
	clearEnv(t)
	t.Setenv("SEAL_K2", strings.Repeat("b", 32))
	t.Setenv("SEAL_K1", strings.Repeat("a", 40))
	c := mustParse(t, mockUpstream+"seal:\n  keys:\n    - {id: k2, secret_env: SEAL_K2}\n    - {id: k1, secret_env: SEAL_K1}\n")
	if len(c.Seal.Keys) != 2 || c.Seal.Keys[0].ID != "k2" || string(c.Seal.Keys[1].Secret) != strings.Repeat("a", 40) {
		t.Fatalf("seal = %+v", c.Seal)
	}
	k, err := c.Seal.Keyring()
	if err != nil || k.ActiveKeyID() != "k2" {
		t.Fatalf("Keyring: %v, active %q", err, k.ActiveKeyID())
	}
	if s := c.Summary(); !strings.HasSuffix(s, `; seals under key "k2" (2 keys open)`) || strings.Contains(s, "bbbb") {
		t.Errorf("summary = %s", s)
	}

	d := mustParse(t, mockUpstream)
	if !d.Seal.Ephemeral() || strings.Contains(d.Summary(), "seal") {
		t.Errorf("without keys: ephemeral %v, summary %s", d.Seal.Ephemeral(), d.Summary())
	}
	if k, err := d.Seal.Keyring(); err != nil || k == nil {
		t.Fatalf("ephemeral Keyring: %v", err)
	}
}

func TestSealProblems(t *testing.T) {
	clearEnv(t)
	t.Setenv("SEAL_SHORT", "too-short")
	t.Setenv("SEAL_OK", strings.Repeat("c", 32))
	got := problemsOf(t, mockUpstream+`seal:
  keys:
    - {id: "k_1", secret_env: SEAL_OK}
    - {id: k2}
    - {id: k3, secret_env: SEAL_SHORT}
    - {id: k4, secret_env: SEAL_UNSET_VARIABLE}
    - {id: k3, secret_env: SEAL_OK}
`)
	want := []string{
		`gateway.yaml:6: seal.keys[0].id: must be 1 to 16 ASCII letters and digits (got "k_1")`,
		"gateway.yaml:7: seal.keys[1].secret_env: is required: the variable holding the key's secret (at least 32 bytes, e.g. `openssl rand -hex 32`)",
		"gateway.yaml:8: seal.keys[2].secret_env: the secret in $SEAL_SHORT has 9 bytes; at least 32 are needed",
		"gateway.yaml:9: seal.keys[3].secret_env: environment variable SEAL_UNSET_VARIABLE is not set",
		"gateway.yaml:10: seal.keys[4].id: repeats seal.keys[2]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if strings.Contains(strings.Join(got, " "), "cccc") {
		t.Error("a problem quotes a secret")
	}
}

func TestWireUnknownMembers(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+"wire:\n  chat: {unknown_members: refuse}\n  messages: {unknown_members: judge}\n")
	if !StrictMembers(c.Wire.Chat.UnknownMembers) || StrictMembers(c.Wire.Messages.UnknownMembers) || StrictMembers(c.Wire.Responses.UnknownMembers) {
		t.Fatalf("wire = %+v", c.Wire)
	}
	if s := c.Summary(); !strings.HasSuffix(s, "; wire chat refuses unknown members") {
		t.Errorf("summary = %s", s)
	}
	got := problemsOf(t, mockUpstream+"wire:\n  responses: {unknown_members: drop}\n")
	want := []string{`gateway.yaml:5: wire.responses.unknown_members: must be judge or refuse (got "drop")`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
)

// envRef finds the environment variables a file names (api_key_env,
// key_env, admin_token_env, identity_key_env).
var envRef = regexp.MustCompile(`(?m)_env:\s*["']?([A-Za-z_][A-Za-z0-9_]*)`)

// TestExamples loads every file in deploy/examples, with the variables it
// names set, and builds its policy and emitter options, so the examples
// never rot.
func TestExamples(t *testing.T) {
	for _, name := range []string{config.EnvListen, config.EnvRedisURL, config.EnvOpenAIKey, config.EnvOpenAIBaseURL} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	files, err := filepath.Glob(filepath.Join("..", "deploy", "examples", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 2 {
		t.Fatalf("found %d example files, want at least gateway.yaml and azure.yaml", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range envRef.FindAllSubmatch(data, -1) {
				// Distinct per variable: client keys must be unique.
				t.Setenv(string(m[1]), "example-secret-for-"+string(m[1]))
			}
			c, err := config.Load(path)
			if err != nil {
				t.Fatalf("Load:\n%v", err)
			}
			if _, err := interceptors.BuildAll(c.Interceptors, interceptors.Env{}); err != nil {
				t.Fatalf("BuildAll:\n%v", err)
			}
			opts, err := c.Enforcement.EngineOptions()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := enforcement.NewEmitter(opts); err != nil {
				t.Fatalf("NewEmitter: %v", err)
			}
			if len(c.Interceptors) == 0 {
				t.Errorf("an example without a policy teaches the wrong thing")
			}
			t.Log(c.Summary())
			for _, w := range c.Warnings() {
				t.Errorf("warning: %s", w)
			}
		})
	}
}

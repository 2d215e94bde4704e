package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// cookbookDir holds the policy files of docs/policies.md: NN-name.yaml
// (a policy), NN-name.cases.yaml (its policy test cases) and, where a
// recipe needs main-file settings, NN-name.gateway.yaml.
var cookbookDir = filepath.Join("..", "..", "docs", "cookbook")

var cookbookName = regexp.MustCompile(`^[0-9]{2}-[a-z0-9-]+(\.cases|\.gateway)?\.yaml$`)

// TestCookbook keeps docs/policies.md true: every recipe's policy passes
// "policy check", its cases pass "policy test" (with at least one case
// that denies or transforms and one that allows), every main-file
// fragment loads, and every file is quoted byte for byte on the page.
func TestCookbook(t *testing.T) {
	entries, err := os.ReadDir(cookbookDir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	recipes := 0
	for _, e := range entries {
		name := e.Name()
		if !cookbookName.MatchString(name) {
			t.Errorf("docs/cookbook/%s: not an NN-name[.cases|.gateway].yaml file", name)
			continue
		}
		files[name] = true
		if strings.HasSuffix(name, ".cases.yaml") || strings.HasSuffix(name, ".gateway.yaml") {
			continue
		}
		recipes++
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			checkRecipe(t, filepath.Join(cookbookDir, name))
		})
	}
	if recipes < 10 {
		t.Errorf("docs/cookbook holds %d recipes, want 10", recipes)
	}
	for name := range files {
		if strings.HasSuffix(name, ".cases.yaml") && !files[strings.TrimSuffix(name, ".cases.yaml")+".yaml"] {
			t.Errorf("docs/cookbook/%s: no policy file for these cases", name)
		}
		if strings.HasSuffix(name, ".gateway.yaml") {
			checkGatewayFragment(t, filepath.Join(cookbookDir, name))
		}
	}
	checkCookbookPage(t, filepath.Join(cookbookDir, "..", "policies.md"), files)
}

func checkRecipe(t *testing.T, pol string) {
	cases := strings.TrimSuffix(pol, ".yaml") + ".cases.yaml"
	if code, out, errOut := policyRun("check", pol); code != 0 {
		t.Errorf("policy check %s: exit %d\n%s%s", pol, code, out, errOut)
	}
	code, out, errOut := policyRun("test", pol, cases)
	if code != 0 || strings.Contains(out, "FAIL") {
		t.Errorf("policy test %s %s: exit %d\n%s%s", pol, cases, code, out, errOut)
	}
	data, err := os.ReadFile(cases)
	if err != nil {
		t.Fatal(err)
	}
	var f policyCases
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var blocking, allowing int
	for _, c := range f.Cases {
		switch c.Expect.Decision {
		case "deny", "transform":
			blocking++
		case "allow":
			allowing++
		}
	}
	if blocking == 0 || allowing == 0 {
		t.Errorf("%s: %d deny/transform cases and %d allow cases, want at least one of each", cases, blocking, allowing)
	}
}

// checkGatewayFragment loads a main-file example as the gateway would,
// with every variable it names set.
func checkGatewayFragment(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`_env: ([A-Z0-9_]+)`).FindAllSubmatch(data, -1) {
		t.Setenv(string(m[1]), "cookbook-test-value-0123456789abcdef")
	}
	if _, err := config.Parse(path, data); err != nil {
		t.Errorf("%s does not load: %v", path, err)
	}
}

// checkCookbookPage requires every ```yaml block of the page that starts
// with a "# docs/cookbook/FILE" line to be that file byte for byte, and
// every file of the cookbook to be on the page.
func checkCookbookPage(t *testing.T, page string, files map[string]bool) {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]bool{}
	blocks := regexp.MustCompile("(?ms)^```yaml\n(.*?)^```$").FindAllSubmatch(data, -1)
	head := regexp.MustCompile(`^# docs/cookbook/(\S+)\n`)
	for _, b := range blocks {
		m := head.FindSubmatch(b[1])
		if m == nil {
			continue
		}
		name := string(m[1])
		quoted[name] = true
		want, err := os.ReadFile(filepath.Join(cookbookDir, name))
		if err != nil {
			t.Errorf("docs/policies.md quotes docs/cookbook/%s, which cannot be read: %v", name, err)
			continue
		}
		if !bytes.Equal(b[1], want) {
			t.Errorf("docs/policies.md: the block of docs/cookbook/%s differs from the file", name)
		}
	}
	for name := range files {
		if !quoted[name] {
			t.Errorf("docs/policies.md does not quote docs/cookbook/%s", name)
		}
	}
}

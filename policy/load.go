package policy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/hooks-gateway/hooks-gateway/config"
)

// versionPrefix and versionDigits shape a Version: short enough for a
// metric label and a record, long enough that two policies never share one
// by chance.
const (
	versionPrefix = "sha256:"
	versionDigits = 16
)

// source is one policy file as read.
type source struct {
	path string
	data []byte
}

// Load reads the policy at path, a file or a directory, and checks it. base
// holds the enforcement settings the document's own override (the main
// configuration's, or config.DefaultEnforcement()). Problems come back
// together in one *config.Error, each with its file and line.
//
// In a directory, the regular files (or links to them) named *.yaml or
// *.yml are read in lexical order; names starting with a dot are skipped,
// so a Kubernetes ConfigMap volume (whose files link through ..data) reads
// as its keys.
//
// checks run over the decoded interceptors, even when the document has
// problems of its own (such as interceptors.BuildAll, which judges each
// type's options): the *config.Error problems they return join the
// document's, so one run reports everything.
func Load(path string, base config.Enforcement, checks ...Checker) (*Document, error) {
	srcs, err := read(path)
	if err != nil {
		return nil, err
	}
	return parse(srcs, base, checks)
}

// Checker checks decoded interceptors further; problems come back as a
// *config.Error, anything else is a failure to check.
type Checker func([]config.Interceptor) error

// Version returns the version the policy at path would load with, without
// checking it.
func Version(path string) (string, error) {
	srcs, err := read(path)
	if err != nil {
		return "", err
	}
	return versionOf(srcs), nil
}

func read(path string) ([]source, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		return []source{{path: path, data: data}}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	var srcs []source
	for _, e := range entries { // ReadDir sorts by name
		name := e.Name()
		if strings.HasPrefix(name, ".") || (filepath.Ext(name) != ".yaml" && filepath.Ext(name) != ".yml") {
			continue
		}
		p := filepath.Join(path, name)
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		srcs = append(srcs, source{path: p, data: data})
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("policy: %s: %w", path, errNoFiles)
	}
	return srcs, nil
}

var errNoFiles = errors.New("no *.yaml or *.yml files in the directory")

// versionOf hashes the file names (not their directory, so a ConfigMap's
// timestamped directories do not change it) and contents, each
// length-prefixed so that no two sources hash alike.
func versionOf(srcs []source) string {
	h := sha256.New()
	for _, s := range srcs {
		writeField(h, []byte(filepath.Base(s.path)))
		writeField(h, s.data)
	}
	return digest(h)
}

func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

func digest(h hash.Hash) string {
	return versionPrefix + hex.EncodeToString(h.Sum(nil))[:versionDigits]
}

// parse decodes and merges the files: interceptors lists are appended, in
// file order, with names unique across files; enforcement and routes may
// each appear in one file only.
func parse(srcs []source, base config.Enforcement, checks []Checker) (*Document, error) {
	doc := &Document{Version: versionOf(srcs), Enforcement: base}
	var problems []config.Problem
	var enfFrom, routesFrom *origin
	names := make(map[string]origin)
	var routeDecoder *config.Decoder
	var routesNode *yaml.Node
	for _, s := range srcs {
		doc.Sources = append(doc.Sources, s.path)
		d := config.NewDecoder(s.path)
		root := d.Root(s.data)
		if root == nil && len(d.Problems()) == 0 {
			// A truncated or emptied file must not load as "no
			// interceptors": in a directory that would silently drop
			// this file's part of the chain.
			d.Problemf("", "the policy file is empty (no YAML mapping); it must set interceptors, enforcement or routes")
		}
		if root != nil {
			d.Mapping(root, "", map[string]func(string, *yaml.Node){
				"interceptors": func(f string, v *yaml.Node) {
					for _, ic := range d.Interceptors(v, f) {
						if ic.Name != "" {
							if o, dup := names[ic.Name]; dup && o.file != s.path {
								d.Problemf(ic.Field()+".name", "duplicate interceptor name %q (also %s:%d)", ic.Name, o.file, o.line)
							} else if !dup {
								names[ic.Name] = origin{s.path, ic.Line}
							}
						}
						doc.Interceptors = append(doc.Interceptors, ic)
					}
				},
				"enforcement": func(f string, v *yaml.Node) {
					if enfFrom != nil {
						d.Problemf(f, "is already set in %s:%d (at most one policy file may set it)", enfFrom.file, enfFrom.line)
						return
					}
					enfFrom = &origin{s.path, d.Line(f)}
					d.Enforcement(v, f, &doc.Enforcement)
				},
				"routes": func(f string, v *yaml.Node) {
					if routesFrom != nil {
						d.Problemf(f, "is already set in %s:%d (at most one policy file may set it)", routesFrom.file, routesFrom.line)
						return
					}
					routesFrom = &origin{s.path, d.Line(f)}
					routeDecoder, routesNode = d, v
				},
			})
		}
		problems = append(problems, d.Problems()...)
	}
	// Routes name interceptors of any file, so they are read last.
	if routeDecoder != nil {
		before := len(routeDecoder.Problems())
		doc.Routes = decodeRoutes(routeDecoder, routesFrom.file, routesNode, names)
		problems = append(problems, routeDecoder.Problems()[before:]...)
	}
	for _, check := range checks {
		more, err := runCheck(check, doc.Interceptors, problems)
		if err != nil {
			return nil, err
		}
		problems = append(problems, more...)
	}
	if len(problems) > 0 {
		return nil, problemsError(problems)
	}
	return doc, nil
}

// runCheck returns check's problems, leaving out those about a field the
// document's own problems already cover.
func runCheck(check Checker, ics []config.Interceptor, have []config.Problem) ([]config.Problem, error) {
	err := check(ics)
	if err == nil {
		return nil, nil
	}
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		return nil, err
	}
	covered := make(map[[2]string]bool, len(have))
	for _, p := range have {
		covered[[2]string{p.File, p.Field}] = true
	}
	var out []config.Problem
	for _, p := range cerr.Problems {
		if !covered[[2]string{p.File, p.Field}] {
			out = append(out, p)
		}
	}
	return out, nil
}

// origin locates a section or an interceptor for problems naming it.
type origin struct {
	file string
	line int
}

// problemsError orders problems by file (in reading order) then line.
func problemsError(ps []config.Problem) error {
	order := map[string]int{}
	for _, p := range ps {
		if _, ok := order[p.File]; !ok {
			order[p.File] = len(order)
		}
	}
	ps = slices.Clone(ps)
	slices.SortStableFunc(ps, func(a, b config.Problem) int {
		if a.File != b.File {
			return order[a.File] - order[b.File]
		}
		return a.Line - b.Line
	})
	return &config.Error{Problems: ps}
}

// FromConfig returns the policy cfg names: the files at policy.path, or
// the inline interceptors (with no routes) when that is empty.
func FromConfig(cfg *config.Config) (*Document, error) {
	if cfg.Policy.Path != "" {
		return Load(cfg.Policy.Path, cfg.Enforcement)
	}
	return Inline(cfg)
}

// Inline returns cfg's inline policy. Its version hashes the interceptors
// and the enforcement settings a policy file could override, as loaded.
func Inline(cfg *config.Config) (*Document, error) {
	h := sha256.New()
	for _, ic := range cfg.Interceptors {
		b, err := yaml.Marshal(&ic.Spec)
		if err != nil {
			return nil, fmt.Errorf("policy: interceptor %s: %w", ic.Name, err)
		}
		writeField(h, b)
	}
	e := cfg.Enforcement
	writeField(h, []byte(e.Mode))
	for _, p := range slices.Sorted(maps.Keys(e.PointModes)) {
		writeField(h, []byte(p+"="+e.PointModes[p]))
	}
	c := e.Composition
	writeField(h, []byte(strings.Join([]string{c.Profile, c.OnApproval, c.OnDisagreement, c.OnTransformConflict}, "\x00")))
	return &Document{
		Version:      digest(h),
		Sources:      []string{cfg.Source},
		Interceptors: cfg.Interceptors,
		Enforcement:  cfg.Enforcement,
	}, nil
}

// Command hooks-ctk runs the AGENT-HOOKS-0.1 conformance test kit against
// a registered harness and prints the conformance report.
//
// Usage:
//
//	hooks-ctk [--harness NAME] [--surface API|all] [--vectors DIR] [--golden FILE] [--format markdown|json]
//
// --surface picks the API surface of a harness that has several (the
// gateway harnesses: chat_completions, the default, responses or
// messages); all runs the vectors on each in turn and reports per surface.
// The gateway-mcp harness is the gateway harness with its tool calls sent
// through the gateway's MCP route (/mcp/{server}) to a real MCP server.
//
// Exit status: 0 when every applicable vector passes, 1 when any vector
// fails, 2 on usage or vector-loading errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/conformance"
)

// Exit codes.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// surfaceAll is the --surface value that runs every surface of a harness.
const surfaceAll = "all"

// harnesses is the --harness registry: adding a harness is one entry,
// name → factory. A harness with API surfaces also has one entry per
// surface, "name/surface", which --surface selects; the plain name is its
// default surface. It is a function so the registry is not mutable
// package state.
func harnesses() map[string]conformance.HarnessFactory {
	reg := map[string]conformance.HarnessFactory{
		"sdk-local":             conformance.NewSDKLocalHarness,
		"sdk-local-incremental": conformance.NewSDKLocalIncrementalHarness,
		"gateway":               conformance.NewGatewayHarness,
	}
	for _, api := range conformance.GatewayAPIs() {
		if f, err := conformance.GatewayHarness(api); err == nil { // every listed API has a harness
			reg["gateway/"+string(api)] = f
		}
	}
	for i, api := range conformance.GatewayAPIs() {
		if f, err := conformance.GatewayMCPHarness(api); err == nil {
			reg["gateway-mcp/"+string(api)] = f
			if i == 0 {
				reg["gateway-mcp"] = f
			}
		}
	}
	for i, api := range conformance.GatewayIncrementalAPIs() {
		if f, err := conformance.GatewayIncrementalHarness(api); err == nil {
			reg["gateway-incremental/"+string(api)] = f
			if i == 0 {
				reg["gateway-incremental"] = f
			}
		}
	}
	return reg
}

// surfaceNames are the --surface values in report order.
func surfaceNames() []string {
	apis := conformance.GatewayAPIs()
	names := make([]string, 0, len(apis))
	for _, api := range apis {
		names = append(names, string(api))
	}
	return names
}

// namedRun is one harness run to report.
type namedRun struct {
	// surface is the API surface, or "" for a harness without surfaces.
	surface string
	factory conformance.HarnessFactory
}

// selectRuns resolves --harness and --surface to the runs to make: the
// harness alone, one of its surfaces, or every surface it has. surfaceSet
// says whether --surface was given; a harness without surface entries
// refuses it.
func selectRuns(registry map[string]conformance.HarnessFactory, harness, surface string, surfaceSet bool) ([]namedRun, error) {
	factory, ok := registry[harness]
	if !ok {
		return nil, fmt.Errorf("no harness registered under %q (registered: %s)", harness, registeredNames(registry))
	}
	var surfaces []string
	for _, s := range surfaceNames() {
		if _, ok := registry[harness+"/"+s]; ok {
			surfaces = append(surfaces, s)
		}
	}
	switch {
	case !surfaceSet:
		return []namedRun{{factory: factory}}, nil
	case len(surfaces) == 0:
		return nil, fmt.Errorf("harness %q has no API surfaces; --surface applies to a harness that has", harness)
	case surface == surfaceAll:
		runs := make([]namedRun, 0, len(surfaces))
		for _, s := range surfaces {
			runs = append(runs, namedRun{surface: s, factory: registry[harness+"/"+s]})
		}
		return runs, nil
	}
	f, ok := registry[harness+"/"+surface]
	if !ok {
		return nil, fmt.Errorf("harness %q has no surface %q (surfaces: %s, %s)", harness, surface, strings.Join(surfaces, ", "), surfaceAll)
	}
	return []namedRun{{surface: surface, factory: f}}, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, harnesses())
	stop()
	os.Exit(code)
}

// run is main without the process: it parses args, runs the vectors on
// the selected harness and writes the report to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, registry map[string]conformance.HarnessFactory) int {
	fl := flag.NewFlagSet("hooks-ctk", flag.ContinueOnError)
	fl.SetOutput(stderr)
	harnessName := fl.String("harness", "sdk-local", "harness to run the vectors on")
	surface := fl.String("surface", "chat_completions", "API surface of a harness that has several ("+strings.Join(surfaceNames(), ", ")+", or "+surfaceAll+")")
	vectorsDir := fl.String("vectors", "", "directory of AH-CTK-*.json vectors (default: the embedded upstream copy)")
	format := fl.String("format", "markdown", "report format: markdown or json")
	goldenFile := fl.String("golden", "", "golden identity file (default: the embedded upstream copy)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: hooks-ctk [--harness NAME] [--surface API|all] [--vectors DIR] [--golden FILE] [--format markdown|json]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "hooks-ctk: unexpected argument %q\n", fl.Arg(0))
		fl.Usage()
		return exitUsage
	}
	if *format != "markdown" && *format != "json" {
		fmt.Fprintf(stderr, "hooks-ctk: --format must be markdown or json, not %q\n", *format)
		return exitUsage
	}
	surfaceSet := false
	fl.Visit(func(f *flag.Flag) { surfaceSet = surfaceSet || f.Name == "surface" })
	runs, err := selectRuns(registry, *harnessName, *surface, surfaceSet)
	if err != nil {
		fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
		return exitUsage
	}

	var vectors []*conformance.Vector
	if *vectorsDir == "" {
		vectors, err = conformance.EmbeddedVectors()
	} else {
		vectors, err = conformance.LoadVectors(os.DirFS(*vectorsDir), ".")
	}
	if err != nil {
		fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
		return exitUsage
	}

	var golden *conformance.GoldenReport
	if *goldenFile == "" {
		golden, err = conformance.CheckGolden(conformance.SpecFS(), conformance.EmbeddedGoldenFile)
	} else {
		golden, err = conformance.CheckGolden(os.DirFS(filepath.Dir(*goldenFile)), filepath.Base(*goldenFile))
	}
	if err != nil {
		fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
		return exitUsage
	}

	reports := make([]surfaceReport, 0, len(runs))
	failed := golden.Failed > 0
	for _, r := range runs {
		rep := conformance.Run(ctx, r.factory, vectors)
		failed = failed || rep.Failed() > 0
		reports = append(reports, surfaceReport{surface: r.surface, report: rep})
	}
	var out []byte
	if *format == "json" {
		out, err = jsonReport(reports, golden)
		if err != nil {
			fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
			return exitUsage
		}
	} else {
		out = []byte(markdownReport(reports, golden))
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "hooks-ctk: write report: %v\n", err)
		return exitUsage
	}
	if failed {
		return exitFail
	}
	return exitOK
}

// surfaceReport is one run's report and the surface it ran on ("" for a
// harness without surfaces).
type surfaceReport struct {
	surface string
	report  conformance.Report
}

// markdownReport is each run's report, a per-surface summary when there
// are several, then the golden identity results.
func markdownReport(reports []surfaceReport, golden *conformance.GoldenReport) string {
	var b strings.Builder
	for _, r := range reports {
		b.WriteString(r.report.Markdown())
		b.WriteString("\n")
	}
	if len(reports) > 1 {
		b.WriteString("# Results per surface\n\n| Surface | Passed | Skipped | Failed |\n|---|---|---|---|\n")
		for _, r := range reports {
			t := r.report.Totals
			fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", r.surface, t.Passed, t.Skipped, t.Failed)
		}
		b.WriteString("\n")
	}
	b.WriteString(golden.Markdown())
	return b.String()
}

// jsonReport is {"vectors", "golden_identity"} for one run, and
// {"surfaces": [{"surface", "vectors"}], "golden_identity"} when
// --surface all ran several.
func jsonReport(reports []surfaceReport, golden *conformance.GoldenReport) ([]byte, error) {
	type surfaceDoc struct {
		Surface string          `json:"surface"`
		Vectors json.RawMessage `json:"vectors"`
	}
	docs := make([]surfaceDoc, 0, len(reports))
	for _, r := range reports {
		vb, err := r.report.JSON()
		if err != nil {
			return nil, err
		}
		docs = append(docs, surfaceDoc{Surface: r.surface, Vectors: vb})
	}
	var doc any = struct {
		Surfaces []surfaceDoc              `json:"surfaces"`
		Golden   *conformance.GoldenReport `json:"golden_identity"`
	}{docs, golden}
	if len(docs) == 1 {
		doc = struct {
			Vectors json.RawMessage           `json:"vectors"`
			Golden  *conformance.GoldenReport `json:"golden_identity"`
		}{docs[0].Vectors, golden}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func registeredNames(registry map[string]conformance.HarnessFactory) string {
	if len(registry) == 0 {
		return "none"
	}
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

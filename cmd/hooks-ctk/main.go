// Command hooks-ctk runs the AGENT-HOOKS-0.1 conformance test kit against
// a registered harness and prints the conformance report.
//
// Usage:
//
//	hooks-ctk [--harness NAME] [--vectors DIR] [--golden FILE] [--format markdown|json]
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

// harnesses is the --harness registry: adding a harness is one entry,
// name → factory. It is a function so the registry is not mutable
// package state.
func harnesses() map[string]conformance.HarnessFactory {
	return map[string]conformance.HarnessFactory{
		"sdk-local": conformance.NewSDKLocalHarness,
		"gateway":   conformance.NewGatewayHarness,
	}
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
	vectorsDir := fl.String("vectors", "", "directory of AH-CTK-*.json vectors (default: the embedded upstream copy)")
	format := fl.String("format", "markdown", "report format: markdown or json")
	goldenFile := fl.String("golden", "", "golden identity file (default: the embedded upstream copy)")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: hooks-ctk [--harness NAME] [--vectors DIR] [--golden FILE] [--format markdown|json]")
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
	factory, ok := registry[*harnessName]
	if !ok {
		fmt.Fprintf(stderr, "hooks-ctk: no harness registered under %q (registered: %s)\n", *harnessName, registeredNames(registry))
		return exitUsage
	}

	var vectors []*conformance.Vector
	var err error
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

	report := conformance.Run(ctx, factory, vectors)
	var out []byte
	if *format == "json" {
		vb, err := report.JSON()
		if err != nil {
			fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
			return exitUsage
		}
		if out, err = json.MarshalIndent(struct {
			Vectors json.RawMessage           `json:"vectors"`
			Golden  *conformance.GoldenReport `json:"golden_identity"`
		}{vb, golden}, "", "  "); err != nil {
			fmt.Fprintf(stderr, "hooks-ctk: %v\n", err)
			return exitUsage
		}
		out = append(out, '\n')
	} else {
		out = []byte(report.Markdown() + "\n" + golden.Markdown())
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "hooks-ctk: write report: %v\n", err)
		return exitUsage
	}
	if report.Failed() > 0 || golden.Failed > 0 {
		return exitFail
	}
	return exitOK
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

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/hooks-gateway/hooks-gateway/records"
)

// Exit codes of the records subcommands.
const (
	exitClean    = 0
	exitProblems = 1
	exitUsage    = 2
)

const recordsUsage = `Usage:

	hooks-gateway records verify [--strict] FILE [FILE...]

verify checks interception-record trails (JSONL, one record per line), as
the jsonl and stdout sinks write them: bare records with policy marker
lines ({"hooks_gateway_policy":{...}}, not records), or envelopes
({"record":{...},"hooks_gateway":{...}}, records.format: envelope). After
the summary it counts the records of each policy version the trail names. Per session_id, sequences must be
unique and gapless from the lowest one seen (in any order: emissions that
run at once are written as each finishes), and none may follow the
session's agent_shutdown.

Errors: gaps, duplicates, records after agent_shutdown, lines that are
not records.
Warnings: sessions that do not start with agent_startup at sequence 0 or
never reach agent_shutdown (rotation cuts trails; live sessions are open),
records with sequence -1 (host failures whose sequence was unknown).

Files form one trail. Rotated files are read oldest first
(records.jsonl.N ... records.jsonl.1, records.jsonl) whatever their order
on the command line; other files in command-line order.

Exit status: 0 without errors, 1 with errors (or warnings, with --strict),
2 on usage errors and unreadable files.
`

// runRecords runs "hooks-gateway records SUBCOMMAND ...".
func runRecords(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, recordsUsage)
		return exitUsage
	}
	switch args[0] {
	case "verify":
		return runVerify(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, recordsUsage)
		return exitClean
	}
	fmt.Fprintf(stderr, "hooks-gateway records: unknown subcommand %q\n\n%s", args[0], recordsUsage)
	return exitUsage
}

// runVerify runs "hooks-gateway records verify": one line per finding,
// then a summary, on stdout.
func runVerify(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("hooks-gateway records verify", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, recordsUsage+"\nFlags:\n"); fl.PrintDefaults() }
	strict := fl.Bool("strict", false, "treat warnings as problems (exit status 1): for trails known to be complete")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitClean
		}
		return exitUsage
	}
	if fl.NArg() == 0 {
		fmt.Fprintf(stderr, "hooks-gateway records verify: no files given\n\n%s", recordsUsage)
		return exitUsage
	}
	rep, err := records.VerifyFiles(fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "hooks-gateway records verify: %v\n", err)
		return exitUsage
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(stdout, f)
	}
	fmt.Fprintln(stdout, rep.Summary())
	for _, l := range rep.PolicyLines() {
		fmt.Fprintln(stdout, l)
	}
	if rep.Errors() > 0 || (*strict && rep.Warnings() > 0) {
		return exitProblems
	}
	return exitClean
}

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/interceptors"
	"github.com/hooks-gateway/hooks-gateway/policy"
	"github.com/hooks-gateway/hooks-gateway/sessions"
)

const policyUsage = `Usage:

	hooks-gateway policy check FILE|DIR
	hooks-gateway policy test FILE|DIR CASES.yaml

check validates a policy offline, as the gateway would load it (a file, or
a directory of *.yaml and *.yml files merged in lexical order): every
problem with its file and line, or the policy version on success.

test runs table cases against the policy: each case emits one context at
one point through the chain its route selects, and compares the combined
verdict with what the case expects. One line per case, then a summary.

Exit status: 0 on success, 1 when the policy has problems or a case fails,
2 on usage errors and unreadable files.
`

// runPolicy runs "hooks-gateway policy SUBCOMMAND ...".
func runPolicy(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, policyUsage)
		return exitUsage
	}
	switch args[0] {
	case "check":
		if len(args) != 2 {
			fmt.Fprintf(stderr, "hooks-gateway policy check: want one FILE or DIR\n\n%s", policyUsage)
			return exitUsage
		}
		return runPolicyCheck(args[1], stdout, stderr)
	case "test":
		if len(args) != 3 {
			fmt.Fprintf(stderr, "hooks-gateway policy test: want a policy FILE or DIR and a CASES file\n\n%s", policyUsage)
			return exitUsage
		}
		return runPolicyTest(args[1], args[2], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, policyUsage)
		return exitClean
	}
	fmt.Fprintf(stderr, "hooks-gateway policy: unknown subcommand %q\n\n%s", args[0], policyUsage)
	return exitUsage
}

func runPolicyCheck(path string, stdout, stderr io.Writer) int {
	doc, code := loadPolicy(path, stderr)
	if doc == nil {
		return code
	}
	fmt.Fprintf(stdout, "policy ok: %s (%d interceptors, %d routes, %d files)\n", doc.Version, len(doc.Interceptors), len(doc.Routes), len(doc.Sources))
	return exitClean
}

// loadPolicy loads and fully checks the policy at path, the interceptor
// types' own options included, printing every problem. The document is nil
// on failure, with the exit status to return.
func loadPolicy(path string, stderr io.Writer) (*policy.Document, int) {
	doc, err := policy.Load(path, config.DefaultEnforcement(), func(ics []config.Interceptor) error {
		_, err := interceptors.BuildAll(ics, offlineEnv())
		return err
	})
	var cerr *config.Error
	switch {
	case errors.As(err, &cerr):
		fmt.Fprintf(stderr, "policy rejected:\n%v\n", cerr)
		return nil, exitProblems
	case err != nil:
		fmt.Fprintf(stderr, "hooks-gateway policy: %v\n", err)
		return nil, exitUsage
	}
	return doc, exitClean
}

// offlineEnv is the interceptor environment of the policy commands: what a
// gateway lends its interceptors, with in-memory counters for the session
// store, so stateful types (budget) build and run offline as they would in
// a gateway with memory sessions.
func offlineEnv() interceptors.Env {
	return interceptors.Env{
		Counters:           sessions.NewMemory(sessions.Options{}),
		InterceptorTimeout: config.DefaultEnforcement().InterceptorTimeout,
	}
}

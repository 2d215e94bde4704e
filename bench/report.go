package main

import (
	"fmt"
	"io"
	"time"
)

// writeMarkdown renders the report: a summary table, then one table per
// scenario, then saturation and soak results when they ran.
func writeMarkdown(w io.Writer, r *Report) {
	fmt.Fprintf(w, "# hooks-gateway bench\n\n")
	fmt.Fprintf(w, "- command: `%s`\n- started: %s\n- machine: %d CPUs (%s), GOMAXPROCS %d, %s; generator, upstream, bare proxy and gateway share it\n- plan: %s\n\n",
		r.Command, r.Started.Format(time.RFC3339), r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GOMAXPROCS, r.Machine.GoVersion, r.Plan)
	if len(r.Scenarios) > 0 {
		writeSummary(w, r.Scenarios)
		for _, s := range r.Scenarios {
			writeScenario(w, s)
		}
	}
	for _, s := range r.Saturation {
		writeSaturation(w, s)
	}
	if r.Soak != nil {
		writeSoak(w, r.Soak)
	}
	if r.Overload != nil {
		writeOverload(w, r.Overload)
	}
}

func writeOverload(w io.Writer, o *OverloadResult) {
	fmt.Fprintf(w, "## Overload\n\nThe json request at %d req/s (%s); the gateway with server.max_requests %d and a %d MiB buffer budget (configs/overload.yaml); the bare proxy has no admission control.\n\n",
		o.Rate, o.RateSource, o.MaxRequests, overloadBufferBudget>>20)
	fmt.Fprintf(w, "| target | requests | admitted (200) | refused (503) | 503 without Retry-After | other | admitted p50 | admitted p99 | refusal p50 | refusal p99 | CPU s / 1k req | peak RSS |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range o.Targets {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %.3f | %.1f MiB |\n", t.Name, t.Requests, t.Admitted, t.Refused,
			t.RefusedNoRetryAfter, t.Other, ms(t.AdmittedLatency.P50), ms(t.AdmittedLatency.P99),
			ms(t.RefusalLatency.P50), ms(t.RefusalLatency.P99), t.CPUPer1k, float64(t.PeakRSS)/(1<<20))
	}
	fmt.Fprintln(w)
	for _, t := range o.Targets {
		if t.OtherKinds != "" {
			fmt.Fprintf(w, "Other answers (%s): %s\n\n", t.Name, t.OtherKinds)
		}
	}
	fmt.Fprintf(w, "Gateway:\n\n")
	for _, c := range o.Checks {
		fmt.Fprintf(w, "- %s\n", c)
	}
	fmt.Fprintln(w)
}

func writeSummary(w io.Writer, ss []*ScenarioResult) {
	fmt.Fprintf(w, "## Summary\n\n")
	fmt.Fprintf(w, "| scenario | rate (req/s) | gateway added p50 | added p99 | gateway TTFB added p50 / p99 | bare proxy added p50 / p99 | gateway CPU / bare | gateway allocs/req | errors (direct/bare/gateway) |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, s := range ss {
		if s.Skipped != "" {
			fmt.Fprintf(w, "| %s | %d | skipped: %s |  |  |  |  |  |  |\n", s.Name, s.Rate, s.Skipped)
			continue
		}
		if s.Failed != "" {
			fmt.Fprintf(w, "| %s | %d | **failed**: %s |  |  |  |  |  |  |\n", s.Name, s.Rate, s.Failed)
			continue
		}
		ttfb := "–"
		if s.TTFBAdded != nil {
			ttfb = ms(s.TTFBAdded.P50) + " / " + ms(s.TTFBAdded.P99)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s / %s | %.2f× | %.0f | %d / %d / %d |\n", s.Name, s.Rate,
			ms(s.AddedP50), ms(s.AddedP99), ttfb, ms(s.BareAddedP50), ms(s.BareAddedP99), s.CPURatio, s.AllocsPerReq,
			s.Targets[0].Errors, s.Targets[1].Errors, s.gatewayOf().Errors)
	}
	fmt.Fprintln(w)
	writeSideBySide(w, ss)
}

// writeSideBySide is every target of every scenario in one table: CPU per
// request, its ratio to the bare proxy's, added latency over direct; then
// the gateway's CPU over each other proxy's.
func writeSideBySide(w io.Writer, ss []*ScenarioResult) {
	fmt.Fprintf(w, "## Targets side by side\n\n")
	fmt.Fprintf(w, "| scenario | target | CPU ms / request | × bare proxy | added p50 | added p99 | errors |\n")
	fmt.Fprintf(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range ss {
		if s.Skipped != "" || s.Failed != "" || len(s.Targets) == 0 {
			continue
		}
		for i, t := range s.Targets {
			ratio, added50, added99 := "–", "–", "–"
			if i > 0 {
				ratio = fmt.Sprintf("%.2f×", t.CPUOverBare)
				added50, added99 = signedMS(t.AddedP50), signedMS(t.AddedP99)
			}
			fmt.Fprintf(w, "| %s | %s | %.3f | %s | %s | %s | %d |\n", s.Name, t.Name, t.CPUPer1k, ratio, added50, added99, t.Errors)
		}
	}
	fmt.Fprintln(w)
	for _, s := range ss {
		if s.Skipped != "" || s.Failed != "" || len(s.Targets) == 0 {
			continue
		}
		gw := s.gatewayOf()
		fmt.Fprintf(w, "- %s: gateway CPU per request", s.Name)
		for _, t := range s.Targets[1 : len(s.Targets)-1] {
			if t.CPUPer1k > 0 {
				fmt.Fprintf(w, " / %s %.2f×", t.Name, gw.CPUPer1k/t.CPUPer1k)
			}
		}
		fmt.Fprintln(w)
		for _, n := range s.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

func writeScenario(w io.Writer, s *ScenarioResult) {
	fmt.Fprintf(w, "## %s\n\n%s, %d req/s.\n\n", s.Name, s.Description, s.Rate)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	if len(s.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if s.Skipped != "" {
		fmt.Fprintf(w, "Skipped: %s\n\n", s.Skipped)
		return
	}
	if d := s.DenyProbe; d != nil {
		terminal := "absent"
		if d.Terminal {
			terminal = "present"
		}
		fmt.Fprintf(w, "Deny probe through the gateway: HTTP %d, %d bytes of answer text received, unverdicted bytes released: %d, terminal event %s.\n\n",
			d.Status, d.TextBytes, d.Unverdicted, terminal)
	}
	if s.Failed != "" {
		fmt.Fprintf(w, "**Failed**: %s\n\n", s.Failed)
		return
	}
	fmt.Fprintf(w, "| target | achieved req/s | p50 | p90 | p99 | max | TTFB p50 | TTFB p99 | CPU s / 1k req | upstream CPU s / 1k req | peak RSS | requests | errors |\n")
	fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, t := range s.Targets {
		up := "–"
		if t.UpstreamCPUPer1k > 0 {
			up = fmt.Sprintf("%.3f", t.UpstreamCPUPer1k)
		}
		ttfb50, ttfb99 := "–", "–"
		if t.TTFB != nil {
			ttfb50, ttfb99 = ms(t.TTFB.P50), ms(t.TTFB.P99)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %s | %s | %s | %.3f | %s | %.1f MiB | %d | %d |\n", t.Name, t.Rate,
			ms(t.Latency.P50), ms(t.Latency.P90), ms(t.Latency.P99), ms(t.Latency.Max), ttfb50, ttfb99,
			t.CPUPer1k, up, float64(t.PeakRSS)/(1<<20), t.Requests, t.Errors)
	}
	fmt.Fprintf(w, "\nGateway over direct: %s p50, %s p99", signedMS(s.AddedP50), signedMS(s.AddedP99))
	if s.TTFBAdded != nil {
		fmt.Fprintf(w, "; time to first byte +%s p50, +%s p99", ms(s.TTFBAdded.P50), ms(s.TTFBAdded.P99))
	}
	fmt.Fprintf(w, ". Gateway CPU per request: %.2f× the bare proxy's. Gateway heap allocations: %.0f per request (%.1f KiB).\n",
		s.CPURatio, s.AllocsPerReq, s.AllocBytesPerReq/1024)
	for _, t := range s.Targets {
		if t.ErrorKinds != "" {
			fmt.Fprintf(w, "\nErrors (%s): %s\n", t.Name, t.ErrorKinds)
		}
	}
	fmt.Fprintln(w)
}

func writeSaturation(w io.Writer, s *SaturationResult) {
	fmt.Fprintf(w, "## Saturation: %s\n\nA step passes with no errors, p99 ≤ %s and ≥ 95%% of the asked rate achieved.\n\n", s.Scenario, ms(s.P99Bound))
	fmt.Fprintf(w, "| target | highest passing rate (req/s) | steps (rate: achieved, p99, errors) |\n| --- | ---: | --- |\n")
	for _, t := range s.Targets {
		fmt.Fprintf(w, "| %s | %d |", t.Name, t.MaxRate)
		for i, st := range t.Steps {
			sep := " "
			if i > 0 {
				sep = "; "
			}
			fmt.Fprintf(w, "%s%d: %.0f, %s, %d", sep, st.Rate, st.Achieved, ms(st.P99), st.Errors)
		}
		fmt.Fprintln(w, " |")
	}
	fmt.Fprintf(w, "\nGateway / bare proxy: %.0f%%.\n\n", 100*s.Ratio)
}

func writeSoak(w io.Writer, s *SoakResult) {
	fmt.Fprintf(w, "## Soak\n\n%s at %d req/s, managed sessions in Redis: %d requests, %d errors, p50 %s, p99 %s, max %s.\n\n",
		s.Duration, s.Rate, s.Requests, s.Errors, ms(s.Latency.P50), ms(s.Latency.P99), ms(s.Latency.Max))
	if s.ErrorKinds != "" {
		fmt.Fprintf(w, "Errors: %s\n\n", s.ErrorKinds)
	}
	fmt.Fprintf(w, "| at | gateway RSS | goroutines |\n| ---: | ---: | ---: |\n")
	for _, x := range s.Samples {
		fmt.Fprintf(w, "| %s | %.1f MiB | %d |\n", x.At.Round(time.Second), float64(x.RSS)/(1<<20), x.Goroutines)
	}
	fmt.Fprintf(w, "\nMemory and goroutines: %s.\n\nRecords verify: %s.\n\n", s.FlatVerdict, s.Verify)
}

// signedMS is ms with its sign: a target can beat direct at a percentile.
func signedMS(d time.Duration) string {
	if d < 0 {
		return "−" + ms(-d)
	}
	return "+" + ms(d)
}

// ms formats a duration in milliseconds with microsecond resolution.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}

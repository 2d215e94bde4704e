package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestTracingDefaultsOff(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream)
	if want := (Tracing{ServiceName: "hooks-gateway", SampleRatio: 1}); c.Tracing != want || c.Tracing.Enabled() {
		t.Errorf("tracing = %+v, want %+v (off)", c.Tracing, want)
	}
	if strings.Contains(c.Summary(), "tracing") {
		t.Errorf("summary mentions tracing while it is off: %s", c.Summary())
	}
	d := Default()
	if d.Tracing.Enabled() || d.Tracing.ServiceName != DefaultServiceName || d.Tracing.SampleRatio != 1 {
		t.Errorf("default tracing = %+v", d.Tracing)
	}
}

func TestTracingParse(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+"tracing:\n  otlp_endpoint: http://otel-collector:4318\n  service_name: gw-eu\n  sample_ratio: 0.25\n")
	if want := (Tracing{OTLPEndpoint: "http://otel-collector:4318", ServiceName: "gw-eu", SampleRatio: 0.25}); c.Tracing != want || !c.Tracing.Enabled() {
		t.Errorf("tracing = %+v, want %+v", c.Tracing, want)
	}
	if s := c.Summary(); !strings.HasSuffix(s, "; tracing otlp otel-collector:4318 (gw-eu, ratio 0.25)") {
		t.Errorf("summary = %s", s)
	}
	c = mustParse(t, mockUpstream+"tracing:\n  otlp_endpoint: https://collector.example:4318/prefix\n  sample_ratio: 0\n")
	if c.Tracing.SampleRatio != 0 || c.Tracing.ServiceName != DefaultServiceName {
		t.Errorf("tracing = %+v", c.Tracing)
	}
}

func TestTracingProblems(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad values", mockUpstream + "tracing:\n  otlp_endpoint: otel-collector:4318\n  service_name: \"\"\n  sample_ratio: 1.5\n", []string{
			"gateway.yaml:5: tracing.otlp_endpoint: must be an absolute http:// or https:// URL, such as http://otel-collector:4318",
			"gateway.yaml:6: tracing.service_name: must not be empty",
			"gateway.yaml:7: tracing.sample_ratio: must be between 0 and 1 (got 1.5)",
		}},
		{"negative ratio", mockUpstream + "tracing:\n  sample_ratio: -0.1\n", []string{
			"gateway.yaml:5: tracing.sample_ratio: must be between 0 and 1 (got -0.1)",
		}},
		{"credentials", mockUpstream + "tracing:\n  otlp_endpoint: http://user:secret@otel:4318\n", []string{
			"gateway.yaml:5: tracing.otlp_endpoint: must not carry credentials",
		}},
		{"query", mockUpstream + "tracing:\n  otlp_endpoint: http://otel:4318?x=1\n", []string{
			"gateway.yaml:5: tracing.otlp_endpoint: must not have a query or fragment",
		}},
		{"types", mockUpstream + "tracing:\n  sample_ratio: half\n  exporter: grpc\n", []string{
			`gateway.yaml:5: tracing.sample_ratio: must be a number (got "half")`,
			"gateway.yaml:6: tracing.exporter: unknown key (expected one of otlp_endpoint, sample_ratio, service_name)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

package otel_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/toolcap/toolcap/chain"
	"github.com/toolcap/toolcap/otel"
)

// TestFromEnvErrors: a value that cannot be read is an error naming the
// variable; a setting toolcap does not follow turns its signal off, with a
// warning naming it.
func TestFromEnvErrors(t *testing.T) {
	const ep = "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"
	tests := []struct {
		name    string
		env     []string
		wantErr string // a substring of the error; "" for none
		warn    string // a substring of the log; "" for none
		on      bool
	}{
		{"endpoint without a scheme", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT=\"collector:4318\": want an http:// or https:// URL", "", false},
		{"sampler", []string{ep, "OTEL_TRACES_SAMPLER=sometimes"}, `OTEL_TRACES_SAMPLER="sometimes"`, "", false},
		{"sampler argument", []string{ep, "OTEL_TRACES_SAMPLER=traceidratio", "OTEL_TRACES_SAMPLER_ARG=2"}, `OTEL_TRACES_SAMPLER_ARG="2"`, "", false},
		{"headers", []string{ep, "OTEL_EXPORTER_OTLP_HEADERS=nokey"}, `OTEL_EXPORTER_OTLP_HEADERS: "nokey" is not key=value`, "", false},
		{"timeout", []string{ep, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT=soon"}, `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="soon"`, "", false},
		{"compression", []string{ep, "OTEL_EXPORTER_OTLP_COMPRESSION=zstd"}, `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want gzip or none`, "", false},
		{"interval", []string{ep, "OTEL_METRIC_EXPORT_INTERVAL=0"}, `OTEL_METRIC_EXPORT_INTERVAL="0"`, "", false},
		{"certificate", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=https://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE=/no/such/ca.pem"}, "OTEL_EXPORTER_OTLP_CERTIFICATE", "", false},
		{"gRPC", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}, "",
			"OTEL_EXPORTER_OTLP_PROTOCOL=grpc: toolcap exports OTLP over HTTP (http/protobuf) only; traces are off", false},
		{"metrics over gRPC only", []string{ep, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc"}, "",
			"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=grpc: toolcap exports OTLP over HTTP (http/protobuf) only; metrics are off", true},
		{"console exporter", []string{ep, "OTEL_TRACES_EXPORTER=console"}, "", "OTEL_TRACES_EXPORTER=console: toolcap exports OTLP only", true},
		{"exporter otlp without an endpoint", []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none"}, "", "", true},
		{"always_off, no metrics", []string{ep, "OTEL_TRACES_SAMPLER=always_off", "OTEL_METRICS_EXPORTER=none"}, "",
			"OTEL_TRACES_SAMPLER=always_off samples no span: traces are off", false},
		{"parentbased_always_off", []string{ep, "OTEL_TRACES_SAMPLER=parentbased_always_off", "OTEL_METRICS_EXPORTER=none"}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			tel, err := otel.FromEnv(context.Background(), tt.env, hclog.New(&hclog.LoggerOptions{Output: &logs, DisableTime: true}))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("FromEnv: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("FromEnv error = %v, want one containing %q", err, tt.wantErr)
			case err != nil:
				return
			}
			defer tel.Shutdown(context.Background())
			if !strings.Contains(logs.String(), tt.warn) {
				t.Errorf("the log does not contain %q:\n%s", tt.warn, logs.String())
			}
			if tel.Enabled() != tt.on {
				t.Errorf("Enabled() = %v, want %v", tel.Enabled(), tt.on)
			}
		})
	}
}

// TestExportSettings: the headers, compression and signal endpoints of
// the environment reach the receiver; resource attributes name the
// service when OTEL_SERVICE_NAME does not.
func TestExportSettings(t *testing.T) {
	recv := newReceiver(t)
	env := []string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + recv.srv.URL + "/v1/traces",
		"OTEL_METRICS_EXPORTER=none",
		"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20t0ken,X-A=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS=X-A=2",
		"OTEL_EXPORTER_OTLP_COMPRESSION=gzip",
		"OTEL_RESOURCE_ATTRIBUTES=service.name=from-attrs,deployment.environment=test",
	}
	tel, err := otel.FromEnv(context.Background(), env, nil)
	if err != nil {
		t.Fatal(err)
	}
	mw := tel.Middleware()
	h := mw(func(context.Context, chain.Call) chain.Result { return chain.Result{} })
	h(parentContext(t), chain.Call{Tool: "T"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	spans := recv.waitSpans("execute_tool T")
	if got := spans["execute_tool T"].Service; got != "from-attrs" {
		t.Errorf("service.name = %q, want from-attrs", got)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	got := map[string]string{}
	for _, k := range []string{"Authorization", "X-A", "Content-Encoding", "Content-Type"} {
		got[k] = recv.headers[0].Get(k)
	}
	want := map[string]string{"Authorization": "Bearer t0ken", "X-A": "2", "Content-Encoding": "gzip", "Content-Type": "application/x-protobuf"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

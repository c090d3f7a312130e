package tracing

import (
	"context"
	"testing"
)

// TestExporterReadsItsEnvironment: the variables toolgate leaves to the
// exporter and the SDK take effect — an HTTPS collector trusted through
// OTEL_EXPORTER_OTLP_CERTIFICATE (which toolgate never read), the
// per-signal headers, protocol and compression, and the resource from
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME over toolgate's
// defaults. The collector is in-process (newTLSReceiver): no collector
// binary is installed here.
func TestExporterReadsItsEnvironment(t *testing.T) { // not parallel: the process's OTEL_* variables
	for _, tc := range []struct {
		name, protocol, compression string
	}{
		{"protobuf", "", ""},
		{"json gzip", "http/json", "gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rcv, ca := newTLSReceiver(t)
			otelEnv(t, map[string]string{
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    rcv.srv.URL + "/v1/traces",
				"OTEL_EXPORTER_OTLP_CERTIFICATE":        ca,
				"OTEL_EXPORTER_OTLP_HEADERS":            "x-team=wrong",
				"OTEL_EXPORTER_OTLP_TRACES_HEADERS":     "x-team=core,authorization=Bearer%20abc",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":    tc.protocol,
				"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": tc.compression,
				"OTEL_RESOURCE_ATTRIBUTES":              "deployment.environment=prod,service.name=from-attributes",
				"OTEL_SERVICE_NAME":                     "gw-one",
			})
			tr, err := New(context.Background(), Config{ServiceVersion: "v0-test"})
			if err != nil {
				t.Fatal(err)
			}
			_, span := tr.StartCall(context.Background(), Call{Method: "tools/call", Tool: "query"})
			span.End()
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatalf("export to the HTTPS collector: %v", err)
			}
			spans, headers := rcv.received(), rcv.requestHeaders()
			if len(spans) != 1 || spans[0].span.Name != "tools/call query" {
				t.Fatalf("spans %v", spans)
			}
			want := map[string]string{"service.name": "gw-one", "service.version": "v0-test", "deployment.environment": "prod"}
			for k, v := range want {
				if got := spans[0].attrs[k]; got != v {
					t.Errorf("resource %s = %q, want %q", k, got, v)
				}
			}
			h := headers[0]
			if h.Get("X-Team") != "core" || h.Get("Authorization") != "Bearer abc" {
				t.Errorf("headers %v, want the per-signal OTEL_EXPORTER_OTLP_TRACES_HEADERS", h)
			}
			wantCT, wantCE := "application/x-protobuf", ""
			if tc.protocol == "http/json" {
				wantCT = "application/json"
			}
			if tc.compression == "gzip" {
				wantCE = "gzip"
			}
			if h.Get("Content-Type") != wantCT || h.Get("Content-Encoding") != wantCE {
				t.Errorf("content type %q encoding %q, want %q %q", h.Get("Content-Type"), h.Get("Content-Encoding"), wantCT, wantCE)
			}
		})
	}
}

package tracing

import (
	"fmt"
	"net/url"
	"strings"
)

// defaultEndpoint is OTLP/HTTP's default traces endpoint, used when the
// exporter is asked for by OTEL_TRACES_EXPORTER=otlp but no endpoint is
// named.
const defaultEndpoint = "http://localhost:4318/v1/traces"

// decide reads the OTEL_* variables only for what the OpenTelemetry
// exporter cannot decide for toolgate: whether to trace at all, and
// whether toolgate can honour what is asked. Tracing is on when an OTLP
// endpoint is named or OTEL_TRACES_EXPORTER=otlp; off with
// OTEL_TRACES_EXPORTER=none, OTEL_SDK_DISABLED=true, or nothing set. An
// exporter, protocol or compression toolgate does not have, or an
// endpoint that is not an http(s) URL, is an error naming the variable:
// the exporter would otherwise fall back silently. Everything else
// (headers, timeout, certificates, resource attributes, sampler, batching)
// the exporter and the SDK read themselves. endpoint is for the log line.
func decide(getenv func(string) string) (on bool, endpoint string, err error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false, "", nil
	}
	tracesEP, baseEP := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), get("OTEL_EXPORTER_OTLP_ENDPOINT")
	switch exporter := get("OTEL_TRACES_EXPORTER"); exporter {
	case "none":
		return false, "", nil
	case "":
		if tracesEP == "" && baseEP == "" {
			return false, "", nil
		}
	case "otlp":
	default:
		return false, "", fmt.Errorf("OTEL_TRACES_EXPORTER=%q: toolgate exports traces with otlp (over HTTP) or none", exporter)
	}
	for _, v := range []struct{ name, value string }{{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEP}, {"OTEL_EXPORTER_OTLP_ENDPOINT", baseEP}} {
		if v.value == "" {
			continue
		}
		if u, err := url.Parse(v.value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return false, "", fmt.Errorf("%s=%q: want an http(s) URL such as http://collector:4318", v.name, v.value)
		}
		if endpoint == "" {
			endpoint = v.value
		}
	}
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch p := get(name); p {
		case "", "http/protobuf", "http/json":
		default:
			return false, "", fmt.Errorf("%s=%q: toolgate exports over HTTP: use http/protobuf or http/json", name, p)
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"} {
		switch c := get(name); c {
		case "", "none", "gzip":
		default:
			return false, "", fmt.Errorf("%s=%q: use gzip or none", name, c)
		}
	}
	return true, endpoint, nil
}

package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
)

// settings is what the OTEL_* variables ask for.
type settings struct {
	enabled  bool
	endpoint string // full URL of the traces endpoint
	encoding otlptracehttp.Encoding
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	service  string
	attrs    []attribute.KeyValue
}

// defaultEndpoint is OTLP/HTTP's default when the exporter is asked for
// by OTEL_TRACES_EXPORTER=otlp but no endpoint is named.
const defaultEndpoint = "http://localhost:4318"

// fromEnv reads the standard OpenTelemetry variables (the subset toolgate
// supports). Tracing is on when an OTLP endpoint is named or
// OTEL_TRACES_EXPORTER=otlp; off with OTEL_TRACES_EXPORTER=none,
// OTEL_SDK_DISABLED=true, or nothing set. Unsupported values are errors
// naming the variable, not silently ignored.
func fromEnv(getenv func(string) string) (settings, error) {
	s := settings{service: "toolgate", encoding: otlptracehttp.EncodingProtobuf}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return s, nil
	}
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	tracesEP := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	baseEP := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	switch exporter {
	case "none":
		return s, nil
	case "":
		if tracesEP == "" && baseEP == "" {
			return s, nil
		}
	case "otlp":
	default:
		return s, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: toolgate exports traces with otlp (over HTTP) or none", exporter)
	}
	s.enabled = true
	switch {
	case tracesEP != "":
		s.endpoint = tracesEP // used as is, per the specification
	case baseEP != "":
		s.endpoint = strings.TrimSuffix(baseEP, "/") + "/v1/traces"
	default:
		s.endpoint = defaultEndpoint + "/v1/traces"
	}
	if u, err := url.Parse(s.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, fmt.Errorf("OTLP endpoint %q: want an http(s) URL such as http://collector:4318", s.endpoint)
	}
	proto := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	switch proto {
	case "", "http/protobuf":
	case "http/json":
		s.encoding = otlptracehttp.EncodingJSON
	default:
		return s, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: toolgate exports over HTTP: use http/protobuf or http/json", proto)
	}
	switch c := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); c {
	case "", "none":
	case "gzip":
		s.gzip = true
	default:
		return s, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%q: use gzip or none", c)
	}
	var err error
	if s.headers, err = parseList(firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")); err != nil {
		return s, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %w", err)
	}
	if t := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return s, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT=%q: milliseconds, a positive integer", t)
		}
		s.timeout = time.Duration(ms) * time.Millisecond
	}
	attrs, err := parseList(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return s, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	for k, v := range attrs {
		if k == "service.name" {
			s.service = v
			continue
		}
		s.attrs = append(s.attrs, attribute.String(k, v))
	}
	if name := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); name != "" {
		s.service = name // wins over OTEL_RESOURCE_ATTRIBUTES, per the specification
	}
	return s, nil
}

func firstSet(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// parseList reads the W3C-baggage-like "k=v,k2=v2" lists of the OTEL_*
// variables, values percent-decoded.
func parseList(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", strings.TrimSpace(item))
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("value of %q: %v", k, err)
		}
		out[k] = dv
	}
	return out, nil
}

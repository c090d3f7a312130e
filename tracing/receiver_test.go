package tracing

import (
	"compress/gzip"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP/HTTP traces endpoint: it decodes each
// export (protobuf, or OTLP JSON) as a collector would and keeps the
// spans with their resource's service.name, and the request headers.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []receivedSpan
	headers []http.Header
	got     chan struct{} // signalled after each export
}

type receivedSpan struct {
	service string
	attrs   map[string]string // the resource's string attributes
	span    *tracepb.Span
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{got: make(chan struct{}, 64)}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve(t)))
	t.Cleanup(r.srv.Close)
	return r
}

// newTLSReceiver is a receiver over HTTPS with a certificate of its own;
// caFile is that certificate as PEM, for OTEL_EXPORTER_OTLP_CERTIFICATE.
func newTLSReceiver(t *testing.T) (r *receiver, caFile string) {
	t.Helper()
	r = &receiver{got: make(chan struct{}, 64)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve(t)))
	t.Cleanup(r.srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return r, caFile
}

func (r *receiver) serve(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		ct := req.Header.Get("Content-Type")
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || (ct != "application/x-protobuf" && ct != "application/json") {
			t.Errorf("unexpected export %s %s %q", req.Method, req.URL.Path, ct)
			http.Error(w, "bad", 400)
			return
		}
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var ex coltracepb.ExportTraceServiceRequest
		if ct == "application/json" {
			// OTLP JSON writes ids in hex where protojson expects base64:
			// only names and attributes are read from a JSON export.
			err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(hexIDsDropped(b), &ex)
		} else {
			err = proto.Unmarshal(b, &ex)
		}
		if err != nil {
			t.Errorf("export is not OTLP %s: %v", ct, err)
			http.Error(w, err.Error(), 400)
			return
		}
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		for _, rs := range ex.ResourceSpans {
			attrs := map[string]string{}
			for _, a := range rs.GetResource().GetAttributes() {
				attrs[a.Key] = a.GetValue().GetStringValue()
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					r.spans = append(r.spans, receivedSpan{attrs["service.name"], attrs, s})
				}
			}
		}
		r.mu.Unlock()
		w.Header().Set("Content-Type", ct)
		if ct == "application/json" {
			_, _ = w.Write([]byte("{}"))
		} else {
			out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
			_, _ = w.Write(out)
		}
		r.got <- struct{}{}
	}
}

// hexIDsDropped removes the traceId, spanId and parentSpanId members of
// an OTLP JSON export.
func hexIDsDropped(b []byte) []byte {
	return hexIDRE.ReplaceAll(b, nil)
}

var hexIDRE = regexp.MustCompile(`"(?:traceId|spanId|parentSpanId)":"[0-9a-f]*",?`)

// newReceiverB is a receiver for benchmarks that only drains exports.
func newReceiverB(b *testing.B) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

func (r *receiver) received() []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedSpan(nil), r.spans...)
}

func (r *receiver) requestHeaders() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// otelEnv makes vars the process's OTEL_* variables for the test (the
// exporter and the SDK read them there), clearing any other OTEL_* the
// test process was started with.
func otelEnv(t testing.TB, vars map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
		}
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
}

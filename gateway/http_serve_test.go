package gateway

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestServe: the gateway answers on its listener until the context ends,
// then shuts down and returns.
func TestServe(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, ln, HTTPOptions{}) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/livez")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/livez: %s", resp.Status)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/livez"); err == nil {
		t.Error("still answering after shutdown")
	}
}

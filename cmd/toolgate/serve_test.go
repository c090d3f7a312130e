package main

import (
	"net"
	"testing"
)

func TestBaseURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr string
		want string
	}{
		{"127.0.0.1:7330", "http://127.0.0.1:7330"},
		{"0.0.0.0:7330", "http://127.0.0.1:7330"},
		{"[::]:7330", "http://127.0.0.1:7330"},
		{"[::1]:80", "http://[::1]:80"},
		{"10.1.2.3:9", "http://10.1.2.3:9"},
	}
	for _, c := range cases {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseURL(addr); got != c.want {
			t.Errorf("baseURL(%s) = %s, want %s", c.addr, got, c.want)
		}
	}
}

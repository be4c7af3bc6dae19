package httpguard_test

import (
	"testing"

	"github.com/squallstream/squall/internal/httpguard"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "localhost.": true, "127.0.0.1": true, "127.1.2.3": true,
		"::1": true, "[::1]": true, "::ffff:127.0.0.1": true, "::1%lo": true,
		"": false, "0.0.0.0": false, "::": false, "192.0.2.1": false, "example.com": false,
		"localhost.example.com": false, "evil-localhost": false, "128.0.0.1": false,
	} {
		if got := httpguard.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:0": true, "[::1]:80": true, "localhost:8080": true,
		":8080": false, "0.0.0.0:0": false, "[::]:0": false, "192.0.2.1:80": false, "127.0.0.1": false, "example.com:80": false,
	} {
		if got := httpguard.LoopbackAddr(addr); got != want {
			t.Errorf("LoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

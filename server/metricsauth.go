package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Metrics key-label modes (Config.MetricsKeyLabels).
const (
	// MetricsKeysHashed labels per-filter series with key_hash, the first
	// 16 hex digits of HMAC-SHA256(token, key name) where token is the
	// metrics token (or the password), or of SHA-256(key name) when there
	// is neither: stable across scrapes and restarts, without the name.
	MetricsKeysHashed = "hashed"
	// MetricsKeysOn labels them with the key name itself.
	MetricsKeysOn = "on"
	// MetricsKeysOff leaves out per-filter series.
	MetricsKeysOff = "off"
)

func checkMetricsKeyLabels(mode string) (string, error) {
	switch mode {
	case "":
		return MetricsKeysHashed, nil
	case MetricsKeysHashed, MetricsKeysOn, MetricsKeysOff:
		return mode, nil
	}
	return "", fmt.Errorf("server: metrics key labels %q: want off, on or hashed", mode)
}

// metricsToken is the bearer token /metrics requires ("" = none).
func (s *Server) metricsToken() string {
	if s.cfg.MetricsToken != "" {
		return s.cfg.MetricsToken
	}
	return s.cfg.Password
}

// metricsAuthorized reports whether r carries "Authorization: Bearer
// <token>" for the metrics token, or no token is configured. Both sides
// are hashed before the constant-time comparison so that the time taken
// does not depend on the token's length either.
func (s *Server) metricsAuthorized(r *http.Request) bool {
	token := s.metricsToken()
	if token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// keyHash is a filter's key_hash label value (see MetricsKeysHashed).
func (s *Server) keyHash(key string) string {
	var sum []byte
	if token := s.metricsToken(); token != "" {
		m := hmac.New(sha256.New, []byte(token))
		m.Write([]byte(key))
		sum = m.Sum(nil)
	} else {
		h := sha256.Sum256([]byte(key))
		sum = h[:]
	}
	return hex.EncodeToString(sum[:8])
}

// unauthorized answers a /metrics request without the token.
func unauthorized(rw http.ResponseWriter) {
	rw.Header().Set("WWW-Authenticate", `Bearer realm="bloomery metrics"`)
	http.Error(rw, "401 unauthorized: /metrics needs Authorization: Bearer <metrics token or password>", http.StatusUnauthorized)
}

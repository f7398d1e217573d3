// Package httpauth holds the checks the HTTP endpoints of toolcap share:
// a bearer token ([BearerOK]) and a public origin ([CheckPublicOrigin]),
// so that toolcap mcp's endpoint, its metrics and the command's flags
// accept and refuse the same values.
package httpauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/url"
	"strings"
)

// BearerOK reports whether header, the value of an Authorization header,
// carries token as a bearer token: "Bearer <token>", the scheme in any
// case (RFC 7235, section 2.1) and followed by one space or more. Both
// the credential and token are hashed before they are compared in
// constant time, so that the time taken does not tell the token's length,
// nor how much of it a guess got right. An empty token is never carried.
//
// Every endpoint of toolcap that asks for a bearer token checks it with
// BearerOK, so that they accept and refuse the same headers.
func BearerOK(header, token string) bool {
	if token == "" {
		return false
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimLeft(cred, " ")))
	want := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// CheckPublicOrigin reports what is wrong with origin as an
// public origin (mcpproxy.HTTPOptions.PublicOrigin): it must be an http:// or https:// URL with a
// host and no path, query or fragment.
func CheckPublicOrigin(origin string) error {
	u, err := url.Parse(origin)
	switch {
	case err != nil:
		return fmt.Errorf("public origin %q: %v", origin, err)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("public origin %q: want http:// or https:// and a host", origin)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("public origin %q: want a scheme and a host only, no path, query, fragment or user", origin)
	}
	return nil
}

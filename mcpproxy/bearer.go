package mcpproxy

import (
	"crypto/sha256"
	"crypto/subtle"
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

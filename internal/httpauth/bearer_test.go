package httpauth_test

import (
	"testing"

	"github.com/toolcap/toolcap/internal/httpauth"
)

func TestBearerOK(t *testing.T) {
	const token = "s3cret"
	tests := []struct {
		header, token string
		want          bool
	}{
		{"Bearer s3cret", token, true},
		{"bearer s3cret", token, true}, // the scheme in any case (RFC 7235)
		{"BEARER s3cret", token, true},
		{"Bearer   s3cret", token, true}, // more than one space
		{"  Bearer s3cret  ", token, true},
		{"", token, false},
		{"Bearer", token, false},
		{"Bearer ", token, false},
		{"Bearer s3cre", token, false},   // a prefix
		{"Bearer s3cret2", token, false}, // longer
		{"Bearer S3CRET", token, false},  // the token exactly
		{"Basic s3cret", token, false},
		{"Bearers3cret", token, false},
		{"Bearer s3cret", "", false}, // no token: nothing carries it
		{"Bearer ", "", false},
	}
	for _, tt := range tests {
		if got := httpauth.BearerOK(tt.header, tt.token); got != tt.want {
			t.Errorf("BearerOK(%q, %q) = %v, want %v", tt.header, tt.token, got, tt.want)
		}
	}
}

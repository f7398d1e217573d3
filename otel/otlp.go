package otel

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// This file is toolcap's OTLP/HTTP client: spans and metrics POSTed as
// protobuf (http/protobuf), encoded by hand from the SDK's data. The
// OpenTelemetry exporters (otlptracehttp, otlpmetrichttp) import the
// collector's generated packages, and with them gRPC: 21.5 MB more in
// cmd/toolcap and 1.5 ms more at every start of it, the Claude Code hook's
// included (docs/benchmarks.md). The messages toolcap sends are few and
// stable (opentelemetry-proto's trace and metrics v1), and the tests
// decode what it sends with go.opentelemetry.io/proto/otlp.

// otlpClient POSTs encoded requests to one endpoint.
type otlpClient struct {
	url     string
	headers map[string]string
	gzip    bool
	timeout time.Duration
	http    *http.Client
}

// newClient returns the client of signal s.
func newClient(s signal) (*otlpClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if s.tls != nil {
		tr.TLSClientConfig = s.tls
	}
	return &otlpClient{url: s.endpoint, headers: s.headers, gzip: s.gzip, timeout: s.timeout, http: &http.Client{Transport: tr}}, nil
}

// maxAttempts bounds the tries of one export: the first, and retries of
// a failure OTLP calls transient (429, 502, 503, 504, or no answer).
const maxAttempts = 3

// post sends one request body, retrying a transient failure, within the
// client's timeout.
func (c *otlpClient) post(ctx context.Context, body []byte) error {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if c.gzip {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = b.Bytes()
	}
	wait := 500 * time.Millisecond
	var err error
	for attempt := 1; ; attempt++ {
		var retry time.Duration
		retry, err = c.try(ctx, body)
		if err == nil || retry < 0 || attempt == maxAttempts {
			return err
		}
		if retry == 0 {
			retry = wait
			wait *= 2
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		}
	}
}

// try makes one POST. It returns how long to wait before another (0: the
// client's own backoff), or -1 when another would fail the same way.
func (c *otlpClient) try(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "toolcap-otlp")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		retry := time.Duration(0)
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			retry = min(time.Duration(s)*time.Second, 30*time.Second)
		}
		return retry, fmt.Errorf("POST %s: %s", c.url, resp.Status)
	}
	return -1, fmt.Errorf("POST %s: %s", c.url, resp.Status)
}

// tlsConfig returns the TLS configuration the certificate files name
// (a CA bundle, a client certificate and key), nil when none is named.
func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate", ca)
		}
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// Protocol buffers' wire format, as opentelemetry-proto's messages use it.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendDoubleField(b []byte, field int, v float64) []byte {
	return appendFixed64Field(b, field, math.Float64bits(v))
}

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendMessage appends the message inner writes as field: inner writes
// to the end of b, and its length goes before it once known.
func appendMessage(b []byte, field int, inner func([]byte) []byte) []byte {
	b = appendTag(b, field, wireBytes)
	// One byte of length is reserved; a longer length moves the message.
	at := len(b)
	b = append(b, 0)
	b = inner(b)
	n := len(b) - at - 1
	if n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var l [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(l[:], uint64(n))
	b = append(b, l[:k-1]...) // room for the longer length
	copy(b[at+k:], b[at+1:at+1+n])
	copy(b[at:], l[:k])
	return b
}

// appendKeyValue appends a KeyValue (key 1, value 2) as field.
func appendKeyValue(b []byte, field int, kv attribute.KeyValue) []byte {
	return appendMessage(b, field, func(b []byte) []byte {
		b = appendStringField(b, 1, string(kv.Key))
		return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
	})
}

// appendAnyValue appends the members of an AnyValue: string 1, bool 2,
// int 3, double 4, array 5 (its values 1).
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.STRING:
		return appendStringField(b, 1, v.AsString())
	case attribute.BOOL:
		return appendVarintField(b, 2, boolInt(v.AsBool()))
	case attribute.INT64:
		return appendVarintField(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendDoubleField(b, 4, v.AsFloat64())
	case attribute.STRINGSLICE:
		return appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.BOOLSLICE:
		return appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	}
	return appendStringField(b, 1, v.String())
}

func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for _, v := range vs {
			b = appendMessage(b, 1, func(b []byte) []byte { return appendAnyValue(b, value(v)) })
		}
		return b
	})
}

func boolInt(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// appendResource appends a Resource (attributes 1) as field.
func appendResource(b []byte, field int, r *resource.Resource) []byte {
	return appendMessage(b, field, func(b []byte) []byte {
		if r == nil {
			return b
		}
		for _, kv := range r.Attributes() {
			b = appendKeyValue(b, 1, kv)
		}
		return b
	})
}

// appendScope appends an InstrumentationScope (name 1, version 2,
// attributes 3) as field.
func appendScope(b []byte, field int, s instrumentation.Scope) []byte {
	return appendMessage(b, field, func(b []byte) []byte {
		b = appendStringField(b, 1, s.Name)
		if s.Version != "" {
			b = appendStringField(b, 2, s.Version)
		}
		for _, kv := range s.Attributes.ToSlice() {
			b = appendKeyValue(b, 3, kv)
		}
		return b
	})
}

// unixNano is t as OTLP's fixed64 times have it, 0 for the zero time.
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

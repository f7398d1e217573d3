package otel

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// config is what the standard OTEL_ environment configures, as toolcap
// reads it (see FromEnv).
type config struct {
	service  string
	resource []attribute.KeyValue
	traces   signal
	metrics  signal
	sampler  sdktrace.Sampler
	interval time.Duration // OTEL_METRIC_EXPORT_INTERVAL; 0: the SDK's default
	// warnings are the settings read and not followed, for the logger.
	warnings []string
}

// signal is the export of one signal: traces or metrics.
type signal struct {
	on       bool
	endpoint string // the URL spans or metrics are POSTed to
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	tls      *tls.Config // nil: the system's roots, no client certificate
}

// lookup returns the value of key in env ("KEY=value" entries, the last
// one winning, as in a process's environment), "" when absent.
func lookup(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return strings.TrimSpace(v)
}

// readConfig reads the OTEL_ variables of env. A value that cannot be read
// is an error naming the variable; a setting toolcap does not follow (a
// gRPC endpoint, an exporter other than otlp) turns its signal off, with a
// warning.
func readConfig(env []string) (config, error) {
	get := func(key string) string { return lookup(env, key) }
	c := config{service: "toolcap"}
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return c, nil
	}
	if s := get("OTEL_SERVICE_NAME"); s != "" {
		c.service = s
	}
	attrs, err := parsePairs("OTEL_RESOURCE_ATTRIBUTES", get("OTEL_RESOURCE_ATTRIBUTES"))
	if err != nil {
		return config{}, err
	}
	for _, k := range sortedKeys(attrs) {
		if k == "service.name" && get("OTEL_SERVICE_NAME") == "" {
			c.service = attrs[k]
			continue
		}
		c.resource = append(c.resource, attribute.String(k, attrs[k]))
	}
	if c.traces, err = readSignal(get, &c.warnings, "TRACES", "/v1/traces"); err != nil {
		return config{}, err
	}
	if c.metrics, err = readSignal(get, &c.warnings, "METRICS", "/v1/metrics"); err != nil {
		return config{}, err
	}
	if c.sampler, err = readSampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG")); err != nil {
		return config{}, err
	}
	if s := get("OTEL_METRIC_EXPORT_INTERVAL"); s != "" {
		ms, err := strconv.Atoi(s)
		if err != nil || ms <= 0 {
			return config{}, fmt.Errorf("OTEL_METRIC_EXPORT_INTERVAL=%q: want a positive number of milliseconds", s)
		}
		c.interval = time.Duration(ms) * time.Millisecond
	}
	return c, nil
}

// readSignal reads the export of one signal (name "TRACES" or "METRICS"):
// on when an OTLP endpoint is set for it (OTEL_EXPORTER_OTLP_ENDPOINT with
// path appended, or OTEL_EXPORTER_OTLP_<name>_ENDPOINT as it is) or
// OTEL_<name>_EXPORTER is otlp (the endpoint then defaults to
// http://localhost:4318), and OTEL_<name>_EXPORTER is not none.
func readSignal(get func(string) string, warnings *[]string, name, path string) (signal, error) {
	exporterVar := "OTEL_" + name + "_EXPORTER"
	exporter := get(exporterVar)
	switch exporter {
	case "none":
		return signal{}, nil
	case "", "otlp":
	default:
		*warnings = append(*warnings, fmt.Sprintf("%s=%s: toolcap exports OTLP only (otlp or none); %s are off", exporterVar, exporter, strings.ToLower(name)))
		return signal{}, nil
	}
	endpointVar := "OTEL_EXPORTER_OTLP_" + name + "_ENDPOINT"
	endpoint := get(endpointVar)
	given := endpoint // as the variable gives it, for the error
	if endpoint == "" {
		if base := get("OTEL_EXPORTER_OTLP_ENDPOINT"); base != "" {
			endpointVar, given, endpoint = "OTEL_EXPORTER_OTLP_ENDPOINT", base, strings.TrimSuffix(base, "/")+path
		}
	}
	if endpoint == "" {
		if exporter == "" {
			return signal{}, nil // nothing set: off
		}
		endpoint = "http://localhost:4318" + path
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return signal{}, fmt.Errorf("%s=%q: want an http:// or https:// URL", endpointVar, given)
	}
	// Each setting the signal's own variable, else the general one.
	pick := func(setting string) (string, string) {
		v := "OTEL_EXPORTER_OTLP_" + name + "_" + setting
		if s := get(v); s != "" {
			return v, s
		}
		v = "OTEL_EXPORTER_OTLP_" + setting
		return v, get(v)
	}
	protocolVar, protocol := pick("PROTOCOL")
	if protocol != "" && protocol != "http/protobuf" {
		*warnings = append(*warnings, fmt.Sprintf("%s=%s: toolcap exports OTLP over HTTP (http/protobuf) only; %s are off", protocolVar, protocol, strings.ToLower(name)))
		return signal{}, nil
	}
	headers, err := parsePairs("OTEL_EXPORTER_OTLP_HEADERS", get("OTEL_EXPORTER_OTLP_HEADERS"))
	if err != nil {
		return signal{}, err
	}
	own, err := parsePairs("OTEL_EXPORTER_OTLP_"+name+"_HEADERS", get("OTEL_EXPORTER_OTLP_"+name+"_HEADERS"))
	if err != nil {
		return signal{}, err
	}
	for k, v := range own {
		if headers == nil {
			headers = map[string]string{}
		}
		headers[k] = v
	}
	s := signal{on: true, endpoint: endpoint, headers: headers, timeout: 10 * time.Second}
	switch v, c := pick("COMPRESSION"); c {
	case "", "none":
	case "gzip":
		s.gzip = true
	default:
		return signal{}, fmt.Errorf("%s=%q: want gzip or none", v, c)
	}
	if v, t := pick("TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return signal{}, fmt.Errorf("%s=%q: want a positive number of milliseconds", v, t)
		}
		s.timeout = time.Duration(ms) * time.Millisecond
	}
	caVar, ca := pick("CERTIFICATE")
	_, cert := pick("CLIENT_CERTIFICATE")
	_, key := pick("CLIENT_KEY")
	if s.tls, err = tlsConfig(ca, cert, key); err != nil {
		return signal{}, fmt.Errorf("%s and the client certificate: %w", caVar, err)
	}
	return s, nil
}

// parsePairs reads a W3C-baggage-like list, "k1=v1,k2=v2", values
// percent-encoded, as OTEL_RESOURCE_ATTRIBUTES and the OTLP headers are
// written; nil for "".
func parsePairs(name, s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("%s: %q is not key=value", name, strings.TrimSpace(item))
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%s: the value of %s: %w", name, k, err)
		}
		out[k] = dv
	}
	return out, nil
}

// readSampler reads OTEL_TRACES_SAMPLER and its argument; the default is
// the SDK's, parentbased_always_on.
func readSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (float64, error) {
		if arg == "" {
			return 1, nil
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG=%q: want a probability from 0 to 1", arg)
		}
		return f, nil
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "traceidratio", "parentbased_traceidratio":
		f, err := ratio()
		if err != nil {
			return nil, err
		}
		if name == "traceidratio" {
			return sdktrace.TraceIDRatioBased(f), nil
		}
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(f)), nil
	}
	return nil, errors.New("OTEL_TRACES_SAMPLER=" + strconv.Quote(name) + ": want always_on, always_off, traceidratio or their parentbased_ forms")
}

module github.com/toolcap/toolcap/redact/gitleaks

go 1.26.0

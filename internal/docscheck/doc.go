// Package docscheck holds tests that keep the documentation true to the
// code: docs/design.md's package table against what each package imports.
// It has no code of its own.
package docscheck

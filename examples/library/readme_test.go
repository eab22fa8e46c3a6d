package main

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEProgram: the README's "Use as a library" program is this
// package's main.go, byte for byte, so the documented program compiles
// (go vet ./... and go build ./... build this package).
func TestREADMEProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Use as a library\n")
	if !ok {
		t.Fatal(`README has no "## Use as a library" section`)
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		t.Fatal("the section has no Go code block")
	}
	block, _, ok = strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("unterminated Go code block")
	}
	if block+"\n" != string(src) {
		t.Fatal("README's library program differs from examples/library/main.go: update one from the other")
	}
}

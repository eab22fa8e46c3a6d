package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// readmeCommands extracts every trainer command from the fenced sh blocks
// of the README: lines starting with `trainer`, `./trainer` or
// `go run ./cmd/trainer` (after environment assignments), joined across
// backslash continuations, with trailing comments removed. It returns the
// arguments after the program name.
func readmeCommands(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	in := false
	var pending string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in && strings.HasPrefix(strings.TrimSpace(line), "```sh")
			continue
		}
		if !in {
			continue
		}
		if pending != "" {
			line = pending + " " + strings.TrimSpace(line)
			pending = ""
		}
		if strings.HasSuffix(line, "\\") {
			pending = strings.TrimSuffix(line, "\\")
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		for len(fields) > 0 && strings.Contains(fields[0], "=") && !strings.HasPrefix(fields[0], "-") {
			fields = fields[1:] // VAR=value prefix
		}
		switch {
		case len(fields) >= 3 && fields[0] == "go" && fields[1] == "run" && fields[2] == "./cmd/trainer":
			cmds = append(cmds, fields[3:])
		case len(fields) >= 1 && (fields[0] == "trainer" || fields[0] == "./trainer"):
			cmds = append(cmds, fields[1:])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// validateCommand checks a command's arguments the way the command does
// before it starts working, without training or writing anything.
func validateCommand(args []string) error {
	if len(args) == 0 {
		_, _, err := parseTrainFlagsFrom(nil, runner.DefaultConfig(), io.Discard)
		return err
	}
	switch args[0] {
	case "train":
		_, _, err := parseTrainFlags(args[1:], io.Discard)
		return err
	case "help", "account", "--version":
		// A history file named in the README (H.json) is a stand-in: give
		// the command a real one of that format.
		for i := range args {
			if i > 0 && args[i-1] == "--history" && args[i] == "H.json" {
				h := filepath.Join(os.TempDir(), "privtrain-readme-history.json")
				if err := os.WriteFile(h, []byte(`[{"mech": "gaussian", "sigma": 1.1, "q": 0.004267, "steps": 1000}, {"mech": "laplace", "b": 10, "q": 1, "steps": 2}]`), 0o644); err != nil {
					return err
				}
				defer os.Remove(h)
				args = append(append([]string{}, args[:i]...), append([]string{h}, args[i+1:]...)...)
			}
		}
		// Cheap: run it (accounting takes milliseconds).
		if code := dispatch(args, io.Discard, io.Discard); code != 0 {
			return errorf("exit code %d", code)
		}
		return nil
	case "experiment":
		if len(args) < 2 {
			return errorf("experiment needs a name")
		}
		switch args[1] {
		case "ptr-table":
			_, _, _, err := parsePTRTable(args[2:], io.Discard)
			return err
		case "pdp-table":
			_, _, _, err := parsePDPTable(args[2:], io.Discard)
			return err
		case "privacy-figures":
			_, err := parsePrivacyFigures(args[2:], io.Discard)
			return err
		}
	case "audit":
		if len(args) < 2 {
			return errorf("audit needs a kind")
		}
		switch args[1] {
		case "mechanism":
			// Run it for real with few samples (the last --samples wins).
			if code := dispatch(append(append([]string{}, args...), "--samples", "2000"), io.Discard, io.Discard); code != 0 {
				return errorf("exit code %d", code)
			}
			return nil
		case "run":
			_, rest := splitFlags(args[2:], runAuditFlags...)
			_, _, err := parseTrainFlags(rest, io.Discard)
			return err
		}
	case "report":
		_, err := parseReportArgs(args[1:])
		return err
	case "rgm-gd":
		if _, code := parseRGM(args[1:], io.Discard, io.Discard); code != -1 {
			return errorf("exit code %d", code)
		}
		return nil
	}
	return errorf("the README test does not know how to validate %q: add it to validateCommand", strings.Join(args, " "))
}

type errorString string

func (e errorString) Error() string { return string(e) }

func errorf(format string, a ...any) error {
	return errorString(strings.TrimSpace(fmt.Sprintf(format, a...)))
}

// TestREADMECommandsValidate runs the argument validation of every command
// the README shows, from the repository root, as written.
func TestREADMECommandsValidate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(cmds) < 12 {
		t.Fatalf("found only %d trainer commands in README.md; the extraction is broken", len(cmds))
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, args := range cmds {
		if err := validateCommand(args); err != nil {
			t.Errorf("README command `trainer %s`: %v", strings.Join(args, " "), err)
		}
	}
}

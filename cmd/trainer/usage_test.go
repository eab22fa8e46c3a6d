package main

import (
	"bytes"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/aggregate"
	"github.com/privtrain/privtrain/corruption"
	"github.com/privtrain/privtrain/datasets"
	"github.com/privtrain/privtrain/model"
	"github.com/privtrain/privtrain/runner"
)

func TestVersionString(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.22.5",
		Path:      "github.com/privtrain/privtrain/cmd/trainer",
		Main:      debug.Module{Path: "github.com/privtrain/privtrain", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-11-23T09:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		},
	}
	devel := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/privtrain/privtrain", Version: "(devel)"}}
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{stamped, true, "trainer github.com/privtrain/privtrain v0.3.0 git 0123abcd 2026-11-23T09:00:00Z (modified) go1.22.5"},
		{devel, true, "trainer github.com/privtrain/privtrain (devel) go1.26.8"},
		{nil, false, "trainer: no build information in this binary"},
	} {
		if got := version(tc.info, tc.ok); got != tc.want {
			t.Errorf("version = %q, want %q", got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	info, ok := debug.ReadBuildInfo()
	if want := version(info, ok) + "\n"; stdout.String() != want || !strings.HasPrefix(want, "trainer ") {
		t.Fatalf("--version printed %q, want %q", stdout.String(), want)
	}
}

// TestTrainHelpFromRegistries: `trainer train --help` shows flags as --flag
// and lists exactly what the registries hold.
func TestTrainHelpFromRegistries(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"train", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := stdout.String()
	if m := regexp.MustCompile(`(?m)^\s+-[a-z]`).FindString(help); m != "" {
		t.Errorf("help shows a single-dash flag %q:\n%s", m, help)
	}
	for flag, names := range map[string][]string{
		"--dataset":    datasets.Names(),
		"--rule":       aggregate.Names(),
		"--corruption": corruption.Kinds(),
		"--method":     runner.Methods(),
		"--preset":     presetNames(),
		"--model":      model.Names(),
	} {
		i := strings.Index(help, "\n  "+flag+" ")
		if i < 0 {
			t.Errorf("help lacks %s", flag)
			continue
		}
		entry, _, _ := strings.Cut(help[i+1:], "\n  --")
		if !strings.Contains(entry, alternatives(names)) {
			t.Errorf("%s help %q does not list %q", flag, entry, alternatives(names))
		}
	}
	for _, want := range []string{"ijcnn1", "rgm-sum", `(default "tsgd-ptr")`, "(default 256)"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

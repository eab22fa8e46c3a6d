package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/internal/fileutil"
)

// writeKey writes a noise key file (64 hex digits) with mode perm.
func writeKey(t *testing.T, path, hex string, perm os.FileMode) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(hex+"\n"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	testKeyA = "9f3c1e77a2b04d58c6e1f0a9b3d7254e81c6fa03d92e47b5a1086c3fe59d2b74"
	testKeyB = "0b7e2d94c15af3608e4d1a7bc29f5e03d6a8417c3be0592f1d74c8a65e3b90f2"
)

// TestNoiseKeyFileCLI: runs given the same --noise-key-file and --seed are
// bit-identical, say so, and publish neither the key nor a warning about
// the seed; a resume accepts only the run's own key; a key file others can
// read, a hand-made key and a key for a non-private method are refused.
func TestNoiseKeyFileCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	key := writeKey(t, filepath.Join(dir, "key"), testKeyA, 0o600)
	run := func(args ...string) (int, string, string) {
		var so, se bytes.Buffer
		code := dispatch(args, &so, &se)
		return code, so.String(), se.String()
	}
	base := []string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "2", "--lr", "1", "--seed", "9",
		"--target-epsilon", "0", "--noise-key-file", key}
	var models [2][]byte
	for i, out := range []string{"a", "b"} {
		code, so, se := run(append(base, "--out", filepath.Join(dir, out))...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, se)
		}
		if !strings.Contains(so, "privacy randomness: secret: the operator's key") || strings.Contains(so+se, "REPRODUCIBLE") {
			t.Errorf("console:\n%s%s", so, se)
		}
		b, err := os.ReadFile(filepath.Join(dir, out, "model.bin"))
		if err != nil {
			t.Fatal(err)
		}
		models[i] = b
		cfg, err := os.ReadFile(filepath.Join(dir, out, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(cfg), testKeyA) || !strings.Contains(string(cfg), `"noise_key_source": "supplied"`) {
			t.Errorf("config.json:\n%s", cfg)
		}
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Error("two runs with the same key and seed differ")
	}
	other := writeKey(t, filepath.Join(dir, "other"), testKeyB, 0o600)
	if code, _, se := run("train", "--resume", "--out", filepath.Join(dir, "a"), "--steps", "3", "--noise-key-file", other); code != 2 || !strings.Contains(se, "not the run's key") {
		t.Errorf("resume with another key: exit %d %q", code, se)
	}
	if code, _, se := run("train", "--resume", "--out", filepath.Join(dir, "a"), "--steps", "3", "--noise-key-file", key); code != 0 {
		t.Errorf("resume with the run's key: exit %d %q", code, se)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--noise-key-file", writeKey(t, filepath.Join(dir, "open"), testKeyA, 0o644)}, "chmod 600"},
		{[]string{"--noise-key-file", writeKey(t, filepath.Join(dir, "zero"), strings.Repeat("00", 32), 0o600)}, "zero key"},
		{[]string{"--noise-key-file", writeKey(t, filepath.Join(dir, "seq"), strings.Repeat("0123456789abcdef", 4), 0o600)}, "pattern"},
		{[]string{"--noise-key-file", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"--method", "nonprivate", "--noise-key-file", key}, "does not use --noise-key-file"},
	} {
		code, _, se := run(append([]string{"train", "--model", "logreg", "--steps", "2", "--out", filepath.Join(dir, "bad")}, c.args...)...)
		if code != 2 || !strings.Contains(se, c.want) || strings.Count(se, "\n") != 1 {
			t.Errorf("%v: exit %d %q, want one line with %q", c.args, code, se, c.want)
		}
	}
}

// TestTrainRefusesOverflowingScales: magnitudes that overflow the float32
// parameters in the first steps (they used to pass validation and fail at
// step 1 with a half-written run directory) are refused before anything
// is written; the largest accepted product trains.
func TestTrainRefusesOverflowingScales(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sigma", "1e308"}, "σ = 1e+308 is above 1e+06"},
		{[]string{"--sigma", "1e300"}, "σ = 1e+300 is above"},
		{[]string{"--clip", "1e308"}, "clipping norm R = 1e+308 is above"},
		{[]string{"--lr", "1e308"}, "learning rate = 1e+308 is above"},
		{[]string{"--method", "tsgd-ptr", "--lr-fail", "1e308"}, "failed PTR test = 1e+308"},
		{[]string{"--method", "tsgd-ptr", "--lr-pass", "2e6"}, "passed PTR test = 2e+06"},
		{[]string{"--lr", "1000", "--clip", "1000", "--sigma", "10"}, "lr·max(σ,1)·max(R,1) = 1e+07"},
		{[]string{"--method", "nonprivate-robust", "--rule", "centered-clip", "--cc-radius", "1e9"}, "ρ = 1e+09"},
	} {
		var so, se bytes.Buffer
		out := filepath.Join(dir, "r")
		code := dispatch(append([]string{"train", "--model", "logreg", "--steps", "2", "--target-epsilon", "0", "--out", out}, c.args...), &so, &se)
		if code != 2 || !strings.Contains(se.String(), c.want) || strings.Count(se.String(), "\n") != 1 {
			t.Errorf("%v: exit %d %q, want one line with %q", c.args, code, se.String(), c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: refused but left %s", c.args, out)
		}
	}
	if testing.Short() {
		return
	}
	var so, se bytes.Buffer
	if code := dispatch([]string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "3", "--lr", "1e6", "--sigma", "1", "--clip", "1",
		"--target-epsilon", "0", "--out", filepath.Join(dir, "max")}, &so, &se); code != 0 {
		t.Errorf("the largest accepted step scale: exit %d %s", code, se.String())
	}
}

// TestRunDirCLI: `trainer train` without --out numbers its directory like
// the default job (runs/default was the quick start's and failed with
// "already holds a run"); --out naming a non-empty directory without a run
// is refused; rgm-gd refuses an --out that is a file before loading data;
// a resume of a directory another process has locked but not yet
// configured says "in use", not "holds no run".
func TestRunDirCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	args := []string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "1", "--target-epsilon", "0"}
	for _, want := range []string{"runs/default", "runs/default-2"} {
		var so, se bytes.Buffer
		if code := dispatch(args, &so, &se); code != 0 {
			t.Fatalf("exit %d: %s", code, se.String())
		}
		if !strings.Contains(so.String(), "run directory: "+want+" ") {
			t.Errorf("want %s:\n%s", want, so.String())
		}
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	os.WriteFile(filepath.Join(home, "notes.txt"), []byte("mine"), 0o644)
	var so, se bytes.Buffer
	if code := dispatch(append(args, "--out", home), &so, &se); code != 2 || !strings.Contains(se.String(), "not empty and holds no run") {
		t.Errorf("--out HOME: exit %d %q", code, se.String())
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	se.Reset()
	if code := dispatch([]string{"rgm-gd", "--out", file, "--data-dir", filepath.Join(dir, "none")}, &so, &se); code != 2 || !strings.Contains(se.String(), "not a directory") {
		t.Errorf("rgm-gd --out FILE: exit %d %q", code, se.String())
	}
	starting := filepath.Join(dir, "starting")
	lock, err := fileutil.Lock(starting)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	se.Reset()
	if code := dispatch([]string{"train", "--resume", "--out", starting}, &so, &se); code != 2 || !strings.Contains(se.String(), "is in use by process") {
		t.Errorf("resume while starting: exit %d %q", code, se.String())
	}
}

// TestConsoleLabelled: the console shows unprivatized values (the loss in
// every progress line), so it opens and ends with the operator-only label:
// a pasted console must not pass for a release.
func TestConsoleLabelled(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	var so, se bytes.Buffer
	if code := dispatch([]string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "2", "--target-epsilon", "0",
		"--out", filepath.Join(t.TempDir(), "run")}, &so, &se); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	lines := strings.Split(strings.TrimSpace(so.String()), "\n")
	first, _, _ := strings.Cut(se.String(), "\n")
	if first != consoleLabel || lines[len(lines)-1] != consoleLabel || !strings.Contains(consoleLabel, "OPERATOR-ONLY") {
		t.Errorf("stderr starts %q, stdout ends %q", first, lines[len(lines)-1])
	}
	if !strings.Contains(se.String(), "loss") {
		t.Errorf("the progress shows no loss, so the label may be stale:\n%s", se.String())
	}
}

// TestMessages: errors name the actual problem: an empty config file (was
// "EOF"), a resume flag conflicting with an unset stored value (was "the
// stored value :"), and a network's real fault (group-norm groups, kernel
// size; not a missing conv stride, no doubled "model: model:").
func TestMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("trains on MNIST")
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	out := filepath.Join(dir, "run")
	var so, se bytes.Buffer
	if code := dispatch([]string{"train", "--method", "dpsgd", "--model", "logreg", "--steps", "1", "--target-epsilon", "0", "--out", out}, &so, &se); code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	net := func(mid string) string {
		return `{"layers":[{"kind":"conv","out":4,"kernel":3,"stride":1},` + mid + `{"kind":"flatten"},{"kind":"dense","out":10}]}`
	}
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"train", "--config", write("empty.json", " \n"), "--out", filepath.Join(dir, "e")}, "the file is empty", "EOF"},
		{[]string{"train", "--config", write("empty.yaml", ""), "--out", filepath.Join(dir, "e")}, "the file is empty", "EOF"},
		{[]string{"train", "--resume", "--out", out, "--accountant", "rdp"}, "--accountant rdp conflicts with the stored value (unset: the method's default)", "value :"},
		{[]string{"train", "--method", "dpsgd", "--steps", "1", "--model-file", write("g0.json", net(`{"kind":"group-norm","groups":0},`)), "--out", filepath.Join(dir, "m")}, "layer 1 (group-norm): groups must be in [1,", "stride"},
		{[]string{"train", "--method", "dpsgd", "--steps", "1", "--model-file", write("g3.json", net(`{"kind":"group-norm","groups":3},`)), "--out", filepath.Join(dir, "m")}, "3 groups do not divide 4 channels", "model: model:"},
		{[]string{"train", "--method", "dpsgd", "--steps", "1", "--model-file", write("k.json", strings.Replace(net(""), `"kernel":3`, `"kernel":100`, 1)), "--out", filepath.Join(dir, "m")}, "input too small: conv 100×100", "model: model:"},
	} {
		so.Reset()
		se.Reset()
		code := dispatch(c.args, &so, &se)
		if code != 2 || !strings.Contains(se.String(), c.want) || strings.Contains(se.String(), c.not) {
			t.Errorf("%q: exit %d %q; want %q, not %q", c.args, code, se.String(), c.want, c.not)
		}
	}
}

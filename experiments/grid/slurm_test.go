package grid

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// directiveArgs splits the #SBATCH lines of a batch script as sbatch does
// (src/sbatch/opt.c: _opt_batch_script stops at the first command line;
// get_argument: whitespace separates, '…' and "…" group, a backslash escapes
// the next character, an unquoted # ends the line). It is an independent
// reimplementation, so the test checks what sbatch would read.
func directiveArgs(t *testing.T, script string) []string {
	t.Helper()
	var args []string
	for _, line := range strings.Split(script, "\n") {
		rest, ok := strings.CutPrefix(line, "#SBATCH")
		if !ok {
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				break
			}
			continue
		}
		var arg []byte
		var q byte
		in, esc, have := false, false, false
		for i := 0; i < len(rest); i++ {
			c := rest[i]
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc, have = true, true
				continue
			case in:
				if c == q {
					in = false
					continue
				}
			case c == '"' || c == '\'':
				in, q, have = true, c, true
				continue
			case c == '#':
				i = len(rest)
				continue
			case c == ' ' || c == '\t':
				if have {
					args = append(args, string(arg))
					arg, have = nil, false
				}
				continue
			}
			arg, have = append(arg, c), true
		}
		if in {
			t.Fatalf("unmatched quote in %q", line)
		}
		if have {
			args = append(args, string(arg))
		}
	}
	return args
}

// TestWriteSlurmHostileValues writes the scripts for an output directory,
// partition, account and sbatch option full of shell and sbatch syntax,
// runs submit.sh with a fake sbatch and an array task with a fake trainer,
// and checks that nothing was executed, every value arrived verbatim, and
// sbatch would read each directive as written.
func TestWriteSlurmHostileValues(t *testing.T) {
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr"},
		Corruptions: PTRPaperCorruptions()[:1], Seeds: []uint64{1, 2}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	hostile := "$(touch PWNED) `touch PWNED` 'q' \"d\" #c %j ;touch PWNED"
	out := filepath.Join(tmp, "my out", hostile)
	bin := filepath.Join(tmp, "bin dir")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(tmp, "record")
	// The fake sbatch records its arguments, one per line, and prints a job id.
	fake := "#!/bin/bash\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$RECORD.sbatch\"\necho 42\n"
	if err := os.WriteFile(filepath.Join(bin, "sbatch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	// The fake trainer records its arguments NUL-separated.
	trainer := filepath.Join(bin, "train er")
	if err := os.WriteFile(trainer, []byte("#!/bin/bash\nprintf '%s\\0' \"$@\" > \"$RECORD.trainer\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"experiment", "ptr-table", "--note=" + hostile, "--out=" + out}
	opts := SlurmOptions{Trainer: trainer, Args: args, Partition: "cpu " + hostile, Account: "acc'x",
		Extra: []string{"--comment=" + hostile}}
	files, err := g.WriteSlurm(out, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if b, err := exec.Command("bash", "-n", f).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v %s", f, err, b)
		}
	}
	dir := filepath.Join(out, "slurm")
	arr, err := os.ReadFile(filepath.Join(dir, "array-tsgd-ptr.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--job-name=ptr-table-tsgd-ptr", "--partition=cpu " + hostile, "--account=acc'x", "--comment=" + hostile,
		"--array=0-1", "--cpus-per-task=2", "--mem=3072M", "--time=0-02:00:00",
		"--output=" + strings.ReplaceAll(filepath.Join(dir, "logs", "ptr-table-tsgd-ptr"), "%", "%%") + "-%A_%a.log",
		"--open-mode=append", "--requeue", "--signal=B:TERM@120"}
	if got := directiveArgs(t, string(arr)); !reflect.DeepEqual(got, want) {
		t.Errorf("sbatch reads\n%q\nwant\n%q", got, want)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RECORD="+record)
	cmd := exec.Command("bash", filepath.Join(dir, "submit.sh"), "--wait")
	cmd.Dir, cmd.Env = tmp, env
	so, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, so)
	}
	if !strings.Contains(string(so), "table in "+filepath.Join(out, "table.md")+"\n") {
		t.Errorf("submit.sh output:\n%s", so)
	}
	b, err := os.ReadFile(record + ".sbatch")
	if err != nil {
		t.Fatal(err)
	}
	if got, w := string(b), "--parsable\narray-tsgd-ptr.sbatch\n--dependency=afterany:42\n--wait\ncollect.sbatch\n"; got != w {
		t.Errorf("sbatch calls:\n%s\nwant\n%s", got, w)
	}
	cmd = exec.Command("bash", filepath.Join(dir, "array-tsgd-ptr.sbatch"))
	cmd.Dir, cmd.Env = tmp, append(env, "SLURM_ARRAY_TASK_ID=1", "SLURM_ARRAY_JOB_ID=42")
	if so, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("array task: %v\n%s", err, so)
	}
	b, err = os.ReadFile(record + ".trainer")
	if err != nil {
		t.Fatal(err)
	}
	if got, w := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), append(args, "--cell", "1"); !reflect.DeepEqual(got, w) {
		t.Errorf("trainer got %q, want %q", got, w)
	}
	filepath.Walk(tmp, func(p string, _ os.FileInfo, _ error) error {
		if filepath.Base(p) == "PWNED" {
			t.Errorf("a value was executed: %s exists", p)
		}
		return nil
	})
}

// TestWriteSlurmRefuses: a value a script cannot hold is refused with one
// line, before any file is written.
func TestWriteSlurmRefuses(t *testing.T) {
	g, err := PTRTable{Preset: "ptr-mnist", Epsilons: []float64{3}, Methods: []string{"tsgd-ptr"},
		Corruptions: PTRPaperCorruptions()[:1], Seeds: []uint64{1}}.Grid()
	if err != nil {
		t.Fatal(err)
	}
	ok := SlurmOptions{Trainer: "/opt/trainer", Args: []string{"experiment", "ptr-table"}}
	for _, c := range []struct {
		name string
		out  string
		edit func(*SlurmOptions)
		want string
	}{
		{"newline in out", "a\n#SBATCH --array=0", nil, "control character"},
		{"CR in out", "a\rb", nil, "control character"},
		{"NUL in out", "a\x00b", nil, "control character"},
		{"ESC in out", "a\x1bb", nil, "control character"},
		{"backslash in out", `a\b`, nil, "backslash"},
		{"hetjob in out", "my-HetJob-dir", nil, "hetjob"},
		{"newline in partition", "o", func(o *SlurmOptions) { o.Partition = "cpu\nrm -rf x" }, "--slurm-partition"},
		{"tab in account", "o", func(o *SlurmOptions) { o.Account = "a\tb" }, "--slurm-account"},
		{"newline in option", "o", func(o *SlurmOptions) { o.Extra = []string{"--qos=a\ntouch x"} }, "--slurm-option"},
		{"packjob in option", "o", func(o *SlurmOptions) { o.Extra = []string{"--comment=packjob"} }, "packjob"},
		{"option without dash", "o", func(o *SlurmOptions) { o.Extra = []string{"qos=low"} }, "not an sbatch option"},
		{"newline in argument", "o", func(o *SlurmOptions) { o.Args = append(o.Args, "--note=a\nb") }, "argument"},
		{"DEL in trainer", "o", func(o *SlurmOptions) { o.Trainer = "/opt/tr\x7fainer" }, "--trainer"},
	} {
		o := ok
		o.Args = append([]string(nil), ok.Args...)
		if c.edit != nil {
			c.edit(&o)
		}
		root := t.TempDir()
		_, err := g.WriteSlurm(filepath.Join(root, c.out), o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, err, c.want)
			continue
		}
		if ents, _ := os.ReadDir(root); len(ents) != 0 {
			t.Errorf("%s: refused but wrote %v", c.name, ents)
		}
	}
}
